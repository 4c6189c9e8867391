"""The secrets of a live session, and the log filters that keep them out of every log line.

:func:`secrets_for` gives the one :class:`SessionSecrets` of a session, shared by its monitor
and its extractor. It knows every value of the agent's sensitive variables (read live from the
blackboard) and every secret heard during a secure capture; :meth:`SessionSecrets.redact` is
applied to every text before it leaves for the logic_slm, a trace or a log line.

:func:`install_log_redaction` (called when a monitor or an extractor attaches) scrubs the
secrets of every live session from loguru records and standard ``logging`` records, whoever
logs them (pipecat's own frame logs included).
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from loguru import logger

from pipecat_steward.core.heard_secrets import (
    mask_digit_runs,
    secrets_in_capture,
    shaped_secrets,
    spoken_secrets,
)
from pipecat_steward.core.redaction import (
    SECURE_PLACEHOLDER,
    IndexedRedactor,
    Redactor,
    as_text,
    secret_digits,
    secret_values,
)
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.pipecat.log_values import mask_text_values
from pipecat_steward.runtime.session import StewardSession

__all__ = [
    "SECURE_CAPTURE_VARIABLE",
    "SessionSecrets",
    "install_log_redaction",
    "redact_everywhere",
    "secrets_for",
]

SECURE_CAPTURE_VARIABLE = "secure_capture_active"
"""The blackboard flag the default secure-capture check reads (set it while a keypad or card
capture owns the caller's input)."""


class SessionSecrets:
    """What must never leave one session in clear (see the module docstring)."""

    def __init__(self, session: StewardSession) -> None:
        self._session = weakref.ref(session)
        self._heard = Redactor()
        # The sensitive specs and values, and the heard secrets, the current redaction was
        # worked out from (see ``_current``).
        self._cache: tuple[tuple[object, ...] | None, Redactor, tuple[Redactor, int | None]] = (
            None,
            self._heard,
            (self._heard, None),
        )
        self.capture_check: Callable[[], bool] = self._flag
        self._specs: tuple[object, tuple[VariableSpec, ...]] = ((), ())
        # Redaction is a function of the text and the current secrets: the same strings
        # (directives, prompts, tool names) recur in every event, so each is redacted once
        # while the secrets stay the same.
        self._memo_for: tuple[Redactor | None, int | None] = (None, None)
        self._memo: dict[str, str] = {}
        # The unknown secrets of the last text looked at: ``prepare`` works them out for the
        # caller's words while their turn ends, and hearing those words then reuses them.
        self._shapes: tuple[tuple[str, int | None], frozenset[str]] = (("", None), frozenset())

    def _sensitive(self, session: StewardSession) -> tuple[VariableSpec, ...]:
        """The agent's sensitive variable specs, filtered once per agent (every text asks)."""
        specs = session.agent.variables
        known, sensitive = self._specs
        if known is not specs:
            sensitive = tuple(s for s in specs if s.sensitive)
            self._specs = (specs, sensitive)
        return sensitive

    def _flag(self) -> bool:
        session = self._session()
        return bool(session and session.state.variables.get(SECURE_CAPTURE_VARIABLE))

    @property
    def capturing(self) -> bool:
        """Whether a secure capture owns the caller's input right now."""
        return self.capture_check()

    def hear(self, text: str) -> str:
        """A caller utterance as it may be recorded.

        During a secure capture its secrets are learnt and the utterance becomes the
        placeholder; otherwise values it names as credentials are learnt and it is redacted
        by value.
        """
        if self.capturing:
            self._heard = self._heard.adding(secrets_in_capture(text))
            return SECURE_PLACEHOLDER
        redactor, digits = self._current()
        unknown = self._shaped(text, digits)
        if unknown:  # learnt: the secrets, and so the redaction, change
            self._heard = self._heard.adding(unknown)
            redactor, digits = self._current()
        return self._redact_with(redactor, digits, text)

    def prepare(self, text: str) -> None:
        """Work out now what hearing ``text`` will need; nothing is learnt or changed.

        For the caller's words while their turn ends: the inference that hears them later finds
        their unknown secrets, and their redacted form when they name none, already worked out.
        During a secure capture there is nothing to prepare (the words are not kept).
        """
        if self.capturing:
            return
        redactor, digits = self._current()
        if not self._shaped(text, digits):
            self._redact_with(redactor, digits, text)

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced: known values and unknown ones by their shape.

        Known: the sensitive variables' live values and what was heard in a secure capture.
        Unknown: values named as a credential, and digit runs shaped like a secret (a
        Luhn-valid card number, or at least as many digits as the shortest sensitive number).
        """
        return self._redact_with(*self._current(), text)

    def bound(self) -> Callable[[str], str]:
        """``redact`` for the secrets as they are now: for the many strings of one moment.

        The strings of one event, trace or call record are redacted together: the current
        secrets are looked up once for them rather than once per string. The function goes
        stale when the secrets change, so it is not kept across an ``await``.
        """
        redactor, digits = self._current()
        memo = self._memo_of(redactor, digits)

        def redact(text: str) -> str:
            clean = memo.get(text)
            return self._fresh(redactor, digits, memo, text) if clean is None else clean

        return redact

    def _redact_with(self, redactor: Redactor, digits: int | None, text: str) -> str:
        """``redact`` with the current redactor and shortest sensitive number looked up."""
        memo = self._memo_of(redactor, digits)
        clean = memo.get(text)
        return self._fresh(redactor, digits, memo, text) if clean is None else clean

    def _memo_of(self, redactor: Redactor, digits: int | None) -> dict[str, str]:
        """The texts redacted for these secrets (a new memo once the secrets changed)."""
        if self._memo_for[0] is not redactor or self._memo_for[1] != digits:
            self._memo_for, self._memo = (redactor, digits), {}
        return self._memo

    def _fresh(
        self, redactor: Redactor, digits: int | None, memo: dict[str, str], text: str
    ) -> str:
        """``text`` redacted for the first time with these secrets, kept in ``memo``."""
        unknown = self._shaped(text, digits)
        clean = (redactor.adding(unknown) if unknown else redactor).redact(text)
        if len(memo) < _MEMO_SIZE:
            memo[text] = clean
        return clean

    def now(self) -> tuple[Redactor, int | None, bool]:
        """What redacts this session's texts right now.

        Returns:
            The current redactor, the fewest digits a sensitive value has (None: no such) and
            whether a secure capture owns the caller's input.
        """
        return (*self._current(), self.capturing)

    def _current(self) -> tuple[Redactor, int | None]:
        """The current redactor and the fewest digits a sensitive value has (None: no such).

        Both are worked out again only when a sensitive variable's value (compared by value: a
        host may change a structure in place), the heard secrets or the agent's sensitive
        variables changed: every text redacted and every log line of the process asks.
        """
        session = self._session()
        if session is None:
            return self._heard, None
        specs = self._sensitive(session)
        if not specs:  # nothing declared sensitive: only what was heard is known
            return self._heard, None
        variables = session.state.variables
        values = (specs, *[_frozen(variables.get(spec.name, _UNSET)) for spec in specs])
        known, heard, current = self._cache
        if known == values and heard is self._heard:
            return current
        redactor = self._heard.adding(secret_values(specs, variables))
        current = (redactor, secret_digits(specs, variables))
        self._cache = (values, self._heard, current)
        return current

    def _shaped(self, text: str, digits: int | None) -> frozenset[str]:
        """Secrets in ``text`` recognised by what names them or by their shape.

        ``digits`` is the fewest digits a sensitive value has; the last text's result is kept.
        """
        key, found = self._shapes
        if key != (text, digits):
            found = spoken_secrets(text) | shaped_secrets(text, digits)
            self._shapes = ((text, digits), found)
        return found


_UNSET: Any = object()  # a sensitive variable that is not set
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def _frozen(value: object) -> object:
    """``value`` as a snapshot that compares by value (structures copied, objects by their text)."""
    if type(value) is str:
        return value
    if type(value) in _PLAIN:  # typed: 0 == False, but their texts (what is redacted) differ
        return (type(value), value)
    if isinstance(value, Mapping):
        items = cast(Mapping[object, object], value).items()
        return ("{}", tuple((k, _frozen(v)) for k, v in items))
    if isinstance(value, (list, tuple)):
        return ("[]", tuple(_frozen(v) for v in cast(Iterable[object], value)))
    if isinstance(value, (set, frozenset)):
        return ("{,}", frozenset(_frozen(v) for v in cast(Iterable[object], value)))
    return (type(value), as_text(value))  # what redaction learns of it is its text


_MEMO_SIZE = 4096
"""Redacted strings kept per session while its secrets stay the same."""

_BOOK: weakref.WeakKeyDictionary[StewardSession, SessionSecrets] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_installed = False


def secrets_for(session: StewardSession) -> SessionSecrets:
    """The session's secrets (created on first use, shared by every consumer)."""
    with _LOCK:
        found = _BOOK.get(session)
        if found is None:
            found = _BOOK[session] = SessionSecrets(session)
        return found


_FRAME_TEXT = re.compile(r"(Transcription\w*Frame\S*\(.*?text: \[)(.*?)(\])")


_Part = tuple[Redactor, int | None, bool]
"""One session's redaction now: its redactor, its fewest digits, whether it is capturing."""


class _EverySession:
    """The secrets of every live session as one redaction, rebuilt only when one changes.

    A log line is redacted once against all of them, trying only the secrets it could hold
    (see :class:`IndexedRedactor`); the sessions' own memos never see log lines (each is new).
    """

    def __init__(self) -> None:
        self._built: tuple[tuple[_Part, ...], _Union] = ((), _Union())

    def now(self, books: list[SessionSecrets]) -> _Union:
        """The union of ``books``' redactions as they are now."""
        parts = tuple([book.now() for book in books])
        built = self._built  # one read: another thread may rebuild it meanwhile
        if parts != built[0]:
            built = (parts, _Union.of(parts))
            self._built = built
        return built[1]


@dataclass(frozen=True, slots=True)
class _Union:
    """What redacts a log line: every session's secrets, the fewest digits, any capture."""

    redactor: IndexedRedactor = IndexedRedactor()
    digits: int | None = None
    capturing: bool = False

    @classmethod
    def of(cls, parts: tuple[_Part, ...]) -> _Union:
        secrets = frozenset[str]().union(*(redactor.secrets for redactor, _, _ in parts))
        digits = min((d for _, d, _ in parts if d is not None), default=None)
        return cls(IndexedRedactor.of(secrets), digits, any(c for _, _, c in parts))


_EVERY_SESSION = _EverySession()


def redact_everywhere(text: str) -> str:
    """``text`` with the secrets of every live session replaced (one pass, whatever their number).

    While a secure capture is active a log line may be written before the capture's secrets are
    learnt (a frame is logged before it reaches the steward), so every transcription text and
    every run of four or more digits is masked then.

    While a session holds a secret, or captures, the line's text values are masked too: a
    streamed piece's whole, another's numbers (see ``log_values``).
    """
    with _LOCK:
        books = list(_BOOK.values())
    if not books:
        return text
    union = _EVERY_SESSION.now(books)
    # Not through the caches of recurring texts: each log line is new, and would push out the
    # strings that do recur (directives, tool names) from them.
    unknown = spoken_secrets.__wrapped__(text) | shaped_secrets.__wrapped__(text, union.digits)
    text = union.redactor.redact(text, unknown)
    if union.capturing or union.redactor.secrets:
        text = mask_text_values(text)
    if union.capturing:
        text = _FRAME_TEXT.sub(rf"\g<1>{SECURE_PLACEHOLDER}\g<3>", text)
        text = mask_digit_runs(text)
    return text


def _patch_loguru(record: Any) -> None:
    record["message"] = redact_everywhere(record["message"])


def install_log_redaction() -> None:
    """Scrub live sessions' secrets from every loguru and ``logging`` record (idempotent)."""
    global _installed
    with _LOCK:
        if _installed:
            return
        _installed = True
    logger.configure(patcher=_patch_loguru)
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is logging's problem to report, not ours
            return record
        clean = redact_everywhere(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record

    logging.setLogRecordFactory(factory)
