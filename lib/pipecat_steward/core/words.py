"""Vocabularies written as text, so that a long word list reads as the words themselves."""

from __future__ import annotations

__all__ = ["phrase_list", "word_list", "word_set"]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`, as a set."""
    return frozenset(text.split())


def word_list(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of `text`, in order."""
    return tuple(text.split())


def phrase_list(text: str) -> tuple[tuple[str, ...], ...]:
    """The comma-separated phrases of `text`, each as its words, in order."""
    return tuple(tuple(phrase.split()) for phrase in text.split(","))
