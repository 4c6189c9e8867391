"""Property tests of the condition grammar: parse is safe on any text, evaluate is total,
and the canonical text round-trips."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipecat_steward.core.expressions import FUNCTIONS, Expression, parse, parse_condition
from pipecat_steward.exceptions import ExpressionError

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROPERTY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- arbitrary text ------------------------------------------------------------------------

TOKENS = [
    *"()[],.:+-*/<>=!'\"\\",
    "==",
    "!=",
    "<=",
    ">=",
    "and",
    "or",
    "not",
    "in",
    "is",
    "lambda",
    "lambda f:",
    "f.get('a'",
    "f['a']",
    "true",
    "False",
    "null",
    "None",
    "a",
    "b.c",
    "_x",
    "0",
    "12",
    "1.5",
    "1e9",
    "1e999",
    "'s'",
    '"t"',
    "'\\u00e9'",
    "'\\q'",
    *sorted(FUNCTIONS),
    "foo",
    " ",
    "\n",
    "é",
]

token_soup = st.lists(st.sampled_from(TOKENS), max_size=40)


def check_parse_is_safe(parser: Callable[[str], Expression], text: str) -> None:
    try:
        expression = parser(text)
    except ExpressionError as error:
        assert error.expression == text
        assert 1 <= error.column <= len(text) + 1
    else:
        assert isinstance(expression, Expression)
        assert expression.source == text
        assert isinstance(expression.evaluate({}), object)


@FUZZ
@given(st.text())
def test_parse_arbitrary_text_returns_or_raises_expression_error(text: str) -> None:
    check_parse_is_safe(parse, text)
    check_parse_is_safe(parse_condition, text)


@FUZZ
@given(token_soup)
def test_parse_token_soup_spaced(tokens: list[str]) -> None:
    text = " ".join(tokens)
    check_parse_is_safe(parse, text)
    check_parse_is_safe(parse_condition, text)


@FUZZ
@given(token_soup)
def test_parse_token_soup_glued(tokens: list[str]) -> None:
    text = "".join(tokens)
    check_parse_is_safe(parse, text)
    check_parse_is_safe(parse_condition, "lambda f: " + text)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["(", "[", "-", "not ", "len(", "a + (", "a or (b and ("]), st.integers(0, 700)
)
def test_deep_or_long_input_never_escapes(opener: str, count: int) -> None:
    check_parse_is_safe(parse, opener * count + "x")


# -- generated well-formed expressions -----------------------------------------------------

ROOTS = ["a", "b", "c", "user", "items", "missing"]
PATHS = ["a", "b", "c", "user.name", "user.age", "user.address.city", "items", "missing.x"]
BINARY = ["+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "and", "or"]

literals = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(max_size=6).map(lambda text: json.dumps(text, ensure_ascii=False)),
    st.text(alphabet="ab'\"\\", max_size=4).map(lambda text: json.dumps(text)),
    st.sampled_from(["true", "false", "null", "True", "False", "None"]),
)


def grow(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Combine sub-expressions with every construct of the grammar, fully parenthesised."""
    return st.one_of(
        st.tuples(children, st.sampled_from(BINARY), children).map(
            lambda parts: f"({parts[0]} {parts[1]} {parts[2]})"
        ),
        st.tuples(st.sampled_from(["-", "not "]), children).map(lambda p: f"({p[0]}({p[1]}))"),
        st.tuples(st.sampled_from(sorted(FUNCTIONS)), children).map(lambda p: f"{p[0]}({p[1]})"),
        st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
    )


expressions = st.recursive(st.one_of(literals, st.sampled_from(PATHS)), grow, max_leaves=12)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.sampled_from([10**400, "1" * 5000, "12", " 7 ", "abc", "", 0, -0.0]),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["name", "age", "address", "city"]), children, max_size=3),
    ),
    max_leaves=8,
)
variables = st.dictionaries(st.sampled_from(ROOTS), values)


def same(left: object, right: object) -> bool:
    """Equality where NaN equals NaN (inf - inf can arise from evaluation)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same, left, right))
    return type(left) is type(right) and left == right


@PROPERTY
@given(expressions, variables)
def test_generated_expressions_parse_and_evaluate_totally(
    text: str, env: Mapping[str, object]
) -> None:
    expression = parse(text)
    assert expression.names <= frozenset(ROOTS)
    # The compiled closure itself is total, not only the guard around it.
    expression._run(env)
    expression.evaluate(env)
    assert expression.truthy(env) in (True, False)


@PROPERTY
@given(expressions, variables)
def test_canonical_text_round_trips(text: str, env: Mapping[str, object]) -> None:
    expression = parse(text)
    canonical = str(expression)
    again = parse(canonical)
    assert str(again) == canonical
    assert again._tree == expression._tree
    assert again == expression
    assert again.names == expression.names
    assert same(again.evaluate(env), expression.evaluate(env))


# -- lambda conditions against their plain equivalent --------------------------------------

ACCESSORS = [
    ("f.get('a')", "a"),
    ('f.get("b",)', "b"),
    ("f['c']", "c"),
    ("f.a", "a"),
    ("f.user.name", "user.name"),
    ("f['user']['age']", "user.age"),
    ("f.get('user').address.city", "user.address.city"),
]


def grow_pairs(
    children: st.SearchStrategy[tuple[str, str]],
) -> st.SearchStrategy[tuple[str, str]]:
    """Build a lambda body and its plain twin with the same shape."""
    return st.one_of(
        st.tuples(children, st.sampled_from(BINARY), children).map(
            lambda p: (f"({p[0][0]} {p[1]} {p[2][0]})", f"({p[0][1]} {p[1]} {p[2][1]})")
        ),
        st.tuples(st.sampled_from(sorted(FUNCTIONS)), children).map(
            lambda p: (f"{p[0]}({p[1][0]})", f"{p[0]}({p[1][1]})")
        ),
    )


pairs = st.recursive(
    st.one_of(literals.map(lambda text: (text, text)), st.sampled_from(ACCESSORS)),
    grow_pairs,
    max_leaves=8,
)


@PROPERTY
@given(pairs, st.sampled_from(["f", "filled", "v"]), variables)
def test_lambda_conditions_match_their_plain_form(
    pair: tuple[str, str], param: str, env: Mapping[str, object]
) -> None:
    body, plain_text = pair
    body = body.replace("f.", f"{param}.").replace("f[", f"{param}[")
    condition = parse_condition(f"lambda {param}: {body}")
    plain = parse(plain_text)
    assert condition.names == plain.names
    assert same(condition.evaluate(env), plain.evaluate(env))
    again = parse_condition(str(condition))
    assert again == condition
    assert same(again.evaluate(env), condition.evaluate(env))


@PROPERTY
@given(st.sampled_from(["a", "user", "items"]), literals, variables)
def test_lambda_default_applies_only_to_null(
    name: str, default_text: str, env: Mapping[str, object]
) -> None:
    condition = parse_condition(f"lambda f: f.get('{name}', {default_text})")
    default = parse(default_text).evaluate({})
    expected = env.get(name)
    assert same(condition.evaluate(env), default if expected is None else expected)
