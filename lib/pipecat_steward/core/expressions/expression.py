"""The parsed, compiled expression object and the two parse entry points."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pipecat_steward.core.expressions.compiler import Evaluator, compile_tree
from pipecat_steward.core.expressions.nodes import Node, free_names, tests_null
from pipecat_steward.core.expressions.operators import truthy
from pipecat_steward.core.expressions.parser import parse_tree
from pipecat_steward.core.expressions.render import render
from pipecat_steward.exceptions import ExpressionError

__all__ = ["Expression", "parse", "parse_condition"]


@dataclass(frozen=True, slots=True, eq=False)
class Expression:
    """A parsed condition, compiled once and evaluated many times.

    Equality and hashing use the canonical text (``str(expression)``), so two spellings of
    the same expression (``a==1`` and ``(a == 1)``) are equal.

    Attributes:
        source: The text the expression was parsed from.
        names: Root variable names it reads (``user.address.city`` gives ``user``; for a
            lambda condition, the translated names such as ``party_size``).

    """

    source: str
    names: frozenset[str]
    _tree: Node = field(repr=False)
    _param: str | None = field(repr=False)
    _run: Evaluator = field(repr=False)
    _canonical: str = field(repr=False)

    def evaluate(self, variables: Mapping[str, object]) -> object:
        """Compute the expression's value; never raises.

        Args:
            variables: Variable name to value; a missing name reads as null.

        Returns:
            The value. Incompatible operands and failed conversions give None.

        """
        try:
            return self._run(variables)
        except Exception:  # a last guard: the operators are total, but inputs are arbitrary
            return None

    def truthy(self, variables: Mapping[str, object]) -> bool:
        """Evaluate and apply Python truthiness (null is False); never raises.

        Args:
            variables: Variable name to value; a missing name reads as null.

        Returns:
            Whether the condition holds.

        """
        return truthy(self.evaluate(variables))

    @property
    def null_aware(self) -> bool:
        """Whether the expression itself tests for missing values.

        ``exists``, ``== null`` or a ``get`` default: such a condition decides on missing data
        by its own words.
        """
        return tests_null(self._tree)

    def __str__(self) -> str:
        return self._canonical

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expression) and self._canonical == other._canonical

    def __hash__(self) -> int:
        return hash(self._canonical)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # The compiled closures cannot be pickled; re-parsing the source rebuilds them.
        return (parse_condition, (self.source,))


def parse(text: str) -> Expression:
    """Parse and compile an expression of the condition grammar.

    Args:
        text: The expression, e.g. ``int(party_size) >= 5 and exists(date)``.

    Returns:
        The compiled expression.

    Raises:
        ExpressionError: On a syntax error, an unknown function, a wrong argument count,
            empty input, or input that is too long or nests too deeply; the error carries
            the 1-based column and the text.

    """
    return _build(text, allow_lambda=False)


def parse_condition(text: str) -> Expression:
    """Parse a condition: an expression, or a seed-style ``lambda p: <expr>`` string.

    The lambda body is parsed with the same grammar, never evaluated as Python; inside it,
    ``p.get('x')``, ``p.get('x', default)``, ``p['x']`` and ``p.x`` read variable ``x``
    (the default applies when ``x`` is missing or null).

    Args:
        text: The condition, e.g. ``"lambda filled: int(filled.get('party_size', 0)) >= 5"``.

    Returns:
        The compiled expression; its ``names`` are the translated variable names.

    Raises:
        ExpressionError: As for :func:`parse`, plus a malformed lambda header or accessor.

    """
    return _build(text, allow_lambda=True)


def _build(text: str, *, allow_lambda: bool) -> Expression:
    try:
        tree, param = parse_tree(text, allow_lambda=allow_lambda)
        run = compile_tree(tree)
        canonical = render(tree, param)
    except RecursionError:
        # The limits keep every pass a few hundred frames deep; this is reachable only
        # when the caller's own stack is already nearly exhausted.
        raise ExpressionError("expression nests too deeply", text, 1) from None
    if param is not None:
        canonical = f"lambda {param}: {canonical}"
    return Expression(text, free_names(tree), tree, param, run, canonical)
