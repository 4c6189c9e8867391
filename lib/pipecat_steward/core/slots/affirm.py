"""The one confirmation classifier: may code confirm a reply without asking the LLM?

Code confirms a readback (slot auto-confirm, the transaction confirmation gate and
``confirm_before``) only when the reply carries nothing of its own. The test is a closed
vocabulary, not a list of bad words: every word must be an affirming word, a politeness or
filler word, or a word of the pending values themselves, and at least one word must affirm.
So a reply with a number or digit, an ordinal or date word, an id-like token, a name or value
that differs from what is pending, a contrast or negation ("but", "actually", "not", "wait"),
or a question is never an affirmation. A wrong "not an affirmation" costs one LLM call; a wrong
"affirmation" would act on a value the caller did not confirm, so the vocabulary errs short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipecat_steward.core.variables import JsonValue
from pipecat_steward.core.words import phrase_list, word_set

__all__ = ["caller_words", "is_affirmation", "is_affirmative"]

# Words that by themselves say "yes".
AFFIRMING = word_set(
    "yes yeah yep yup yea ya yah aye mhm correct right sure ok okay alright perfect great "
    "exactly confirmed confirm absolutely definitely affirmative indeed certainly fine good "
    "precisely totally yes'm yessir proceed accurate agreed excellent wonderful lovely "
    "brilliant cool awesome fantastic splendid superb"
)
# Multi-word affirmations whose words are not affirming on their own.
AFFIRMING_PHRASES: tuple[tuple[str, ...], ...] = phrase_list(
    "uh huh, mm hmm, sounds good, go ahead, of course, that works, works for me, you bet, "
    "you got it, please do, do it, spot on, by all means, all set, that's it, thats it, "
    "i agree, go for it, will work, that'll work, would work, happy with that"
)
# Words that may surround an affirmation without carrying content of their own. No number,
# ordinal, date, time, negation or contrast word is here, nor any preposition that an
# utterance could hang a value on ("for", "to" only as "for me", "to us" below).
FILLER = word_set(
    "that that's thats this it it's its is was all sounds sound looks look seems thank thanks "
    "you so much very please oh ah um uh er erm hmm mm huh well i i'm im we we're were me us "
    "really quite just be would will that'll thatll do does go ahead and a the lot sir madam "
    "ma'am mate dear of course spot on bet got by means set works work agree happy with "
    "everything there there's theres you're youre understood seem completely entirely "
    "perfectly pretty super nice kind kindly cheers hey then"
)
# Prepositions allowed only before a pronoun ("sounds good to me"): "for" and "to" alone may
# be a mis-heard "four" or "two", or carry a value ("for eight").
PRONOUN_PREPOSITIONS = frozenset({"for", "to"})
PRONOUNS = frozenset({"me", "us", "it"})
# Never allowed, even as a word of a pending value: negation, contrast, numbers and dates.
NEVER = word_set(
    "no not nope nah never don't dont isn't isnt wasn't but actually instead wait change hold "
    "except however though although wrong different rather update make cancel one two three "
    "four five six seven eight nine ten eleven twelve first second third fourth fifth last "
    "next today tomorrow tonight yesterday noon midnight am pm january february march april "
    "may june july august september october november december monday tuesday wednesday "
    "thursday friday saturday sunday weekend week month"
)
# Anything but letters, apostrophes, spaces and sentence punctuation marks a value
# (digits, "@", "/", "#", "%", "$", "+", "&", "=" …).
_VALUE_MARK = re.compile(r"[^\w\s'.,!;:\-\u2014\u2013\u2026\"()]|\d|_")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def caller_words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, contractions whole ("don't", typographic or not)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _pending_words(pending: Iterable[JsonValue]) -> frozenset[str]:
    words: set[str] = set()
    for value in pending:
        if isinstance(value, str):
            words.update(w for w in caller_words(value) if w not in NEVER)
    return frozenset(words)


def _has_phrase(words: list[str]) -> bool:
    joined = f" {' '.join(words)} "
    return any(f" {' '.join(p)} " in joined for p in AFFIRMING_PHRASES)


def _allowed(words: list[str], i: int, own: frozenset[str]) -> bool:
    word = words[i]
    if word in NEVER:
        return False
    if word in AFFIRMING or word in FILLER or word in own:
        return True
    following = words[i + 1] if i + 1 < len(words) else ""
    return word in PRONOUN_PREPOSITIONS and following in PRONOUNS


def is_affirmation(
    text: str, pending: Iterable[JsonValue] = (), others: Iterable[JsonValue] = ()
) -> bool:
    """True when ``text`` confirms and carries nothing of its own.

    Args:
        text: The caller's reply to a readback or confirmation question.
        pending: The values awaiting confirmation; a word of one of them may be repeated
            ("Yes, Chen" for the name Chen), except numbers, dates and negations.
        others: Values the caller could pick instead (an enum slot's ``values``): a word of
            one that is not a pending value's word names a different value ("Yes, great"
            when "good" is pending), so it is never an affirmation.

    Returns:
        True only for a reply made of affirming, politeness and filler words (and words of
        the pending values), with at least one affirming word or phrase, no question mark,
        no digit and no symbol that marks a value.
    """
    text = text.replace("\u2019", "'")
    if "?" in text or _VALUE_MARK.search(text):
        return False
    words = caller_words(text)
    if not words:
        return False
    own = _pending_words(pending)
    if (_pending_words(others) - own) & set(words):
        return False
    if not all(_allowed(words, i, own) for i in range(len(words))):
        return False
    return any(w in AFFIRMING for w in words) or _has_phrase(words)


def is_affirmative(text: str) -> bool:
    """``is_affirmation`` with no pending values to repeat."""
    return is_affirmation(text)
