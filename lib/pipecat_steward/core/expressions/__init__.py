"""The one condition grammar: parse once at load, evaluate over variables on the hot path.

Grammar (Python-like precedence, lowest first)::

    or  <  and  <  not  <  == != < <= > >= in, not in  <  + -  <  * /  <  unary -  <  primary

Primaries are literals (``'text'``/``"text"`` with backslash escapes, ``12``, ``1.5``,
``true``/``True``, ``false``/``False``, ``null``/``None``, ``[a, b]``), dotted names
(``user.address.city`` reads nested mappings), parenthesised expressions and calls of the
allow-listed :data:`FUNCTIONS`. Comparisons do not chain.

Evaluation is total: a missing name is null, incompatible operands give null, orderings and
``in`` with a null operand are False, and :meth:`Expression.evaluate` never raises. bool is
not a number in arithmetic or equality. :func:`parse_condition` also accepts seed-style
``"lambda filled: int(filled.get('party_size', 0)) >= 5"`` strings, parsed with this grammar,
never by Python.

Example:
    >>> condition = parse_condition("lambda filled: int(filled.get('party_size', 0)) >= 5")
    >>> condition.names
    frozenset({'party_size'})
    >>> condition.truthy({"party_size": "6"})
    True

"""

from pipecat_steward.core.expressions.expression import Expression, parse, parse_condition
from pipecat_steward.core.expressions.functions import FUNCTIONS

__all__ = ["FUNCTIONS", "Expression", "parse", "parse_condition"]
