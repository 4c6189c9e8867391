"""Behaviour of the condition grammar: operators, precedence, paths, functions, lambdas, errors."""

from __future__ import annotations

import copy
import math
import pickle
import sys
from collections.abc import Mapping

import pytest

from pipecat_steward.core import expressions
from pipecat_steward.core.expressions import FUNCTIONS, Expression, parse, parse_condition
from pipecat_steward.core.expressions.parser import MAX_DEPTH, MAX_LENGTH, MAX_NESTING
from pipecat_steward.exceptions import ConfigError, ExpressionError

VARS: Mapping[str, object] = {
    "n": 5,
    "f": 2.5,
    "s": "Hello",
    "empty": "",
    "flag": True,
    "off": False,
    "nothing": None,
    "items": [1, 2, "x"],
    "user": {"name": "Ada", "address": {"city": "Paris"}, "age": 36},
}


def ev(text: str, variables: Mapping[str, object] = VARS) -> object:
    return parse(text).evaluate(variables)


# -- public surface ------------------------------------------------------------------------


def test_public_api_is_exactly_the_documented_names() -> None:
    assert sorted(expressions.__all__) == ["Expression", "FUNCTIONS", "parse", "parse_condition"]
    assert frozenset({"len", "lower", "upper", "int", "float", "str", "exists"}) == FUNCTIONS


def test_expression_is_immutable_and_keeps_its_source() -> None:
    expression = parse("n > 1")
    assert isinstance(expression, Expression)
    assert expression.source == "n > 1"
    with pytest.raises(AttributeError):
        expression.source = "other"  # type: ignore[misc]


def test_expression_equality_uses_canonical_text() -> None:
    assert parse("a==1") == parse("(a == 1)")
    assert hash(parse("a==1")) == hash(parse("a  ==  1"))
    assert parse("a == 1") != parse("a == true")
    assert parse("a == 1") != parse("a == 1.0")


def test_expression_survives_pickle_and_deepcopy() -> None:
    expression = parse_condition("lambda filled: int(filled.get('party_size', 0)) >= 5")
    for clone in (pickle.loads(pickle.dumps(expression)), copy.deepcopy(expression)):
        assert clone == expression
        assert clone.truthy({"party_size": "7"})


def test_expression_error_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        parse("a ==")


# -- literals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12),
        ("1.5", 1.5),
        ("2e3", 2000.0),
        ("1.5E-2", 0.015),
        ("'single'", "single"),
        ('"double"', "double"),
        (r"'it\'s'", "it's"),
        (r'"say \"hi\""', 'say "hi"'),
        (r"'a\nb\tc\\d'", "a\nb\tc\\d"),
        (r"'\u00e9'", "é"),
        ("'é ✓'", "é ✓"),
        ("true", True),
        ("True", True),
        ("false", False),
        ("False", False),
        ("null", None),
        ("None", None),
        ("[1, 'a', null]", [1, "a", None]),
        ("[]", []),
        ("[1, 2,]", [1, 2]),
        ("(1, 2)", [1, 2]),
        ("(1,)", [1]),
    ],
)
def test_literals(text: str, value: object) -> None:
    result = ev(text)
    assert result == value
    assert type(result) is type(value)


def test_list_literal_is_fresh_on_every_evaluation() -> None:
    expression = parse("[1, 2]")
    first = expression.evaluate({})
    assert isinstance(first, list)
    first.append(3)
    assert expression.evaluate({}) == [1, 2]


# -- names and paths -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("n", 5),
        ("user.name", "Ada"),
        ("user.address.city", "Paris"),
        ("user.address.zip", None),
        ("user.name.first", None),
        ("missing", None),
        ("missing.deeper.still", None),
        ("nothing.x", None),
        ("items.x", None),
        ("user.in", None),
    ],
)
def test_names_and_dotted_paths(text: str, value: object) -> None:
    assert ev(text) == value


def test_paths_read_any_mapping() -> None:
    class Settings(Mapping[str, object]):
        def __getitem__(self, key: str) -> object:
            if key == "mode":
                return "strict"
            raise KeyError(key)

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter(["mode"])

        def __len__(self) -> int:
            return 1

    assert ev("config.mode", {"config": Settings()}) == "strict"
    assert ev("mode", Settings()) == "strict"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("a", {"a"}),
        ("user.address.city == 'Paris'", {"user"}),
        ("a + b * c > len(d) and not e or f in [g, 1]", {"a", "b", "c", "d", "e", "f", "g"}),
        ("1 + 2", set()),
        ("exists(a) and a.b == a.c", {"a"}),
        ("true and null", set()),
    ],
)
def test_names_are_root_variables(text: str, names: set[str]) -> None:
    assert parse(text).names == frozenset(names)


# -- arithmetic ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2", 3),
        ("n - 7", -2),
        ("n * f", 12.5),
        ("7 / 2", 3.5),
        ("-n", -5),
        ("--n", 5),
        ("- -n", 5),
        ("-f * 2", -5.0),
        ("'a' + 'b'", "ab"),
        ("s + ' world'", "Hello world"),
        ("[1] + [2, 3]", [1, 2, 3]),
        ("items + [4]", [1, 2, "x", 4]),
        ("10 - 3 - 2", 5),
        ("24 / 4 / 2", 3.0),
        ("1 + 1.5", 2.5),
    ],
)
def test_arithmetic(text: str, value: object) -> None:
    assert ev(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "nothing + 1",
        "missing * 2",
        "1 / 0",
        "1.5 / 0",
        "'a' + 1",
        "'a' * 3",
        "'a' - 'b'",
        "true + 1",
        "flag * 2",
        "-s",
        "-flag",
        "-nothing",
        "[1] + 'a'",
        "user + 1",
        "10 ** 2",
    ][:-1],
)
def test_arithmetic_on_incompatible_operands_is_null(text: str) -> None:
    assert ev(text) is None


def test_arithmetic_overflow_is_null() -> None:
    huge = 10**400
    assert ev("big * 1.5", {"big": huge}) is None
    assert ev("big / 3", {"big": huge}) is None
    assert ev("big + 1", {"big": huge}) == huge + 1


# -- comparisons ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("n == 5", True),
        ("n == 5.0", True),
        ("n != 5", False),
        ("n < 6", True),
        ("n <= 5", True),
        ("n > 5", False),
        ("n >= 5", True),
        ("s == 'Hello'", True),
        ("'apple' < 'banana'", True),
        ("'b' >= 'a'", True),
        ("f > 2", True),
        ("nothing == null", True),
        ("missing == null", True),
        ("missing != null", False),
        ("n != null", True),
        ("flag == true", True),
        ("flag == 1", False),
        ("off == 0", False),
        ("[1, true] == [1, true]", True),
        ("[1, true] == [1, 1]", False),
        ("user.address == user.address", True),
        ("items == [1, 2, 'x']", True),
    ],
)
def test_comparisons(text: str, value: bool) -> None:
    assert ev(text) is value


@pytest.mark.parametrize(
    "text", ["nothing < 1", "nothing >= 1", "1 > missing", "missing <= missing", "null < null"]
)
def test_ordering_with_null_is_false(text: str) -> None:
    assert ev(text) is False


@pytest.mark.parametrize("text", ["'a' < 3", "s >= n", "flag > 0", "[1] < [2]", "user > 1"])
def test_ordering_of_incompatible_types_is_null(text: str) -> None:
    assert ev(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2 in items", True),
        ("'x' in items", True),
        ("3 in items", False),
        ("3 not in items", True),
        ("'ell' in s", True),
        ("'z' not in s", True),
        ("'name' in user", True),
        ("'zip' in user.address", False),
        ("'zip' not in user.address", True),
        ("[1] in [[1], [2]]", True),
        ("true in [1]", False),
        ("1 in [true]", False),
        ("nothing in items", False),
        ("nothing not in items", False),
        ("1 in missing", False),
        ("1 not in missing", False),
        ("[1] in user", False),
    ],
)
def test_membership(text: str, value: bool) -> None:
    assert ev(text) is value


@pytest.mark.parametrize("text", ["1 in 5", "1 in s", "'a' in n", "1 not in 5"])
def test_membership_of_incompatible_types_is_null(text: str) -> None:
    assert ev(text) is None


# -- boolean logic -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("flag and n", 5),
        ("off and n", False),
        ("off or s", "Hello"),
        ("empty or 'fallback'", "fallback"),
        ("nothing or nothing", None),
        ("n and s and items", [1, 2, "x"]),
        ("not flag", False),
        ("not nothing", True),
        ("not empty", True),
        ("not not n", True),
        ("not missing.x", True),
    ],
)
def test_boolean_operators_follow_python(text: str, value: object) -> None:
    assert ev(text) == value


def test_and_or_short_circuit() -> None:
    # The right side would be null-on-error anyway; the point is the deciding value returns.
    assert ev("off and 1 / 0") is False
    assert ev("n or 1 / 0") == 5


# -- precedence ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 / 2", 8.0),
        ("-2 * 3", -6),
        ("-(2 + 3)", -5),
        ("2 * -3", -6),
        ("1 + 2 == 3", True),
        ("n > 1 and n < 10", True),
        ("not n == 5", False),
        ("not (n == 5)", False),
        ("(not n) == false", True),
        ("true or false and false", True),
        ("(true or false) and false", False),
        ("not true or true", True),
        ("not (true or true)", False),
        ("false and false or true", True),
        ("1 + 1 in [2]", True),
        ("not 3 in items", True),
        ("n == 5 and not flag or s == 'Hello'", True),
    ],
)
def test_precedence(text: str, value: object) -> None:
    assert ev(text) == value


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("a+b*c", "a + b * c"),
        ("(a+b)*c", "(a + b) * c"),
        ("a-(b-c)", "a - (b - c)"),
        ("(a - b) - c", "(a - b) - c"),
        ("a or b and c", "a or b and c"),
        ("(a or b) and c", "(a or b) and c"),
        ("not (a and b)", "not (a and b)"),
        ("not a == b", "not a == b"),
        ("(a == b) == c", "(a == b) == c"),
        ("-(-a)", "--a"),
        ("x not in ['a',\"b\"]", 'x not in ["a", "b"]'),
        ("s == 'it\\'s'", 's == "it\'s"'),
        ("(1, 2)", "[1, 2]"),
        ("True and None", "true and null"),
    ],
)
def test_str_is_canonical_and_reparses(text: str, canonical: str) -> None:
    assert str(parse(text)) == canonical
    assert str(parse(canonical)) == canonical


# -- functions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("len(s)", 5),
        ("len(items)", 3),
        ("len(user)", 3),
        ("len('')", 0),
        ("len(n)", None),
        ("len(nothing)", None),
        ("lower(s)", "hello"),
        ("upper(s)", "HELLO"),
        ("lower(n)", None),
        ("upper(nothing)", None),
        ("int('12')", 12),
        ("int(' 12 ')", 12),
        ("int('-3')", -3),
        ("int('6.0')", 6),
        ("int('6.7')", 6),
        ("int('abc')", None),
        ("int('')", None),
        ("int(f)", 2),
        ("int(-2.9)", -2),
        ("int(n)", 5),
        ("int(true)", 1),
        ("int(nothing)", None),
        ("int(items)", None),
        ("float('2.5')", 2.5),
        ("float(n)", 5.0),
        ("float('x')", None),
        ("float(nothing)", None),
        ("str(n)", "5"),
        ("str(f)", "2.5"),
        ("str(s)", "Hello"),
        ("str(nothing)", None),
        ("exists(n)", True),
        ("exists(off)", True),
        ("exists(empty)", True),
        ("exists(nothing)", False),
        ("exists(missing)", False),
        ("exists(1 / 0)", False),
        ("len(lower(s))", 5),
    ],
)
def test_functions(text: str, value: object) -> None:
    result = ev(text)
    assert result == value
    assert type(result) is type(value)


def test_int_of_non_finite_or_huge_values_is_null() -> None:
    assert ev("int(x)", {"x": math.inf}) is None
    assert ev("int(x)", {"x": math.nan}) is None
    assert ev("int(x)", {"x": "1" * 5000}) is None
    assert ev("float(x)", {"x": 10**400}) is None
    assert ev("str(x)", {"x": 10**5000}) is None


# -- lambda conditions ---------------------------------------------------------------------


SEED = "lambda filled: int(filled.get('party_size', 0)) >= 5"


@pytest.mark.parametrize(
    ("variables", "holds"),
    [
        ({"party_size": 6}, True),
        ({"party_size": "5"}, True),
        ({"party_size": 4}, False),
        ({"party_size": None}, False),
        ({}, False),
        ({"party_size": "lots"}, False),
    ],
)
def test_seed_lambda_condition(variables: Mapping[str, object], holds: bool) -> None:
    condition = parse_condition(SEED)
    assert condition.names == frozenset({"party_size"})
    assert condition.truthy(variables) is holds


@pytest.mark.parametrize(
    ("text", "names", "variables", "value"),
    [
        ("lambda v: v.get('x')", {"x"}, {"x": 3}, 3),
        ("lambda v: v.get('x', 7)", {"x"}, {}, 7),
        ("lambda v: v.get('x', 7)", {"x"}, {"x": None}, 7),
        ("lambda v: v.get('x', 7)", {"x"}, {"x": 0}, 0),
        ("lambda v: v.get('x', None)", {"x"}, {}, None),
        ("lambda v: v.get('x', v.get('y'))", {"x", "y"}, {"y": 2}, 2),
        ('lambda v: v.get("x",)', {"x"}, {"x": 1}, 1),
        ("lambda v: v['x']", {"x"}, {"x": "a"}, "a"),
        ("lambda v: v.x", {"x"}, {"x": "a"}, "a"),
        ("lambda v: v.get", {"get"}, {"get": 4}, 4),
        ("lambda v: v.user.city", {"user"}, {"user": {"city": "Rome"}}, "Rome"),
        ("lambda v: v['user']['city']", {"user"}, {"user": {"city": "Rome"}}, "Rome"),
        ("lambda v: v.get('user').city", {"user"}, {"user": {"city": "Rome"}}, "Rome"),
        ("lambda filled: filled['a'] and filled.b", {"a", "b"}, {"a": 1, "b": 2}, 2),
        ("lambda f: f.get('n', 0) > 2 and other", {"n", "other"}, {"n": 3, "other": 1}, 1),
        ("lambda f: len(f.get('items', [])) == 0", {"items"}, {}, True),
        ("lambda f: f.get('k') in ('a', 'b')", {"k"}, {"k": "b"}, True),
        ("lambda f: f.get('k') == None", {"k"}, {}, True),
        ("lambda f: not f.get('ok', False)", {"ok"}, {}, True),
        ("  lambda  f :  f.x", {"x"}, {"x": 1}, 1),
    ],
)
def test_lambda_translation(
    text: str, names: set[str], variables: Mapping[str, object], value: object
) -> None:
    condition = parse_condition(text)
    assert condition.names == frozenset(names)
    assert condition.evaluate(variables) == value
    # The canonical form is itself a lambda that re-parses to an equal condition.
    again = parse_condition(str(condition))
    assert again == condition
    assert again.evaluate(variables) == value


def test_parse_condition_accepts_plain_expressions() -> None:
    assert parse_condition("a > 1") == parse("a > 1")
    assert parse_condition("a > 1").truthy({"a": 2})


def test_lambda_body_is_never_executed_as_python() -> None:
    text = "lambda f: __import__('os').system('false')"
    with pytest.raises(ExpressionError, match="unknown function '__import__'"):
        parse_condition(text)
    with pytest.raises(ExpressionError):
        parse_condition("lambda f: f.__class__.__mro__()")


@pytest.mark.parametrize(
    ("text", "column", "problem"),
    [
        ("lambda f: f", 11, "use f.get('name')"),
        ("lambda f: f + 1", 11, "use f.get('name')"),
        ("lambda: 1", 7, "one parameter"),
        ("lambda a, b: 1", 9, "expected ':'"),
        ("lambda and: 1", 8, "one parameter"),
        ("lambda f 1", 10, "expected ':'"),
        ("lambda f:", 10, "expected an operand"),
        ("lambda f: f.get(1)", 17, "quoted variable name"),
        ("lambda f: f.get(name)", 17, "quoted variable name"),
        ("lambda f: f['first name']", 13, "not a valid variable name"),
        ("lambda f: f['a.b']", 13, "not a valid variable name"),
        ("lambda f: f['in']", 13, "not a valid variable name"),
        ("lambda f: f[0]", 13, "quoted variable name"),
        ("lambda f: f.get('a', 1).b", 24, "nothing may follow"),
        ("lambda f: f.get('a', 1, 2)", 25, "expected ')'"),
        ("lambda f: f.get('a').lower()", 27, "unknown function 'a.lower'"),
        ("lambda f: f.get('a') is None", 22, "unexpected 'is'"),
        ("x and lambda f: 1", 7, "expected an operand"),
    ],
)
def test_lambda_errors(text: str, column: int, problem: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_condition(text)
    assert caught.value.column == column
    assert problem in caught.value.problem


def test_parse_rejects_lambda_strings() -> None:
    with pytest.raises(ExpressionError, match="parse_condition") as caught:
        parse(SEED)
    assert caught.value.column == 1


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "column", "problem"),
    [
        ("a == ", 6, "expected an operand, found end of expression"),
        ("foo(1)", 1, "unknown function 'foo'"),
        ("x and bar(1)", 7, "unknown function 'bar'"),
        ("a.b(1)", 1, "unknown function 'a.b'"),
        ("len()", 1, "len() takes exactly 1 argument, got 0"),
        ("int(1, 2)", 1, "int() takes exactly 1 argument, got 2"),
        ("", 1, "empty expression"),
        ("   ", 1, "empty expression"),
        ("a b", 3, "unexpected 'b'"),
        ("(a", 3, "expected ')' to close '(' at column 1"),
        ("a)", 2, "unexpected ')'"),
        ("()", 2, "empty parentheses"),
        ("[1, 2", 6, "expected ',' or ']'"),
        ("f(", 1, "unknown function 'f'"),
        ("len(1", 6, "expected ',' or ')'"),
        ("'abc", 1, "unterminated string"),
        ('"abc\\', 5, "unterminated string"),
        ("'a\\q'", 3, "unknown escape"),
        ("'\\u12'", 2, "unknown escape"),
        ("a < b < c", 7, "chained comparisons"),
        ("a == b != c", 8, "chained comparisons"),
        ("a in b in c", 8, "chained comparisons"),
        ("a == not b", 6, "'not' must be parenthesised"),
        ("a + not b", 5, "'not' must be parenthesised"),
        ("not", 4, "expected an operand"),
        ("a and", 6, "expected an operand"),
        ("and a", 1, "expected an operand, found 'and'"),
        ("a = 1", 3, "use '=='"),
        ("a && b", 3, "use 'and'"),
        ("a || b", 3, "use 'or'"),
        ("!a", 1, "use 'not'"),
        ("a @ b", 3, "unexpected character '@'"),
        ("a.", 3, "expected a name after '.'"),
        ("a.1", 3, "expected a name after '.'"),
        ("1e999", 1, "number is too large"),
        ("x is None", 3, "unexpected 'is'"),
        ("a : b", 3, "unexpected ':'"),
        ("+1", 1, "expected an operand"),
        ("a[0]", 2, "unexpected '['"),
        ("1 2", 3, "unexpected '2'"),
        ("true.x", 5, "unexpected '.'"),
        ("a ** 2", 4, "expected an operand, found '*'"),
        ("a\n== ", 6, "expected an operand"),
    ],
)
def test_syntax_errors_carry_column_and_text(text: str, column: int, problem: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse(text)
    assert caught.value.column == column
    assert caught.value.expression == text
    assert problem in caught.value.problem


def test_unknown_function_lists_the_allowed_ones() -> None:
    with pytest.raises(
        ExpressionError, match="allowed: exists, float, int, len, lower, str, upper"
    ):
        parse("foo(1)")


def test_length_limit() -> None:
    at_limit = "a" * MAX_LENGTH
    assert parse(at_limit).names == frozenset({at_limit})
    with pytest.raises(ExpressionError, match="longer than") as caught:
        parse("a" * (MAX_LENGTH + 1))
    assert caught.value.column == MAX_LENGTH + 1


@pytest.mark.parametrize(
    ("opener", "closer"), [("(", ")"), ("[", "]"), ("len(", ")"), ("-", ""), ("not ", "")]
)
def test_nesting_limit(opener: str, closer: str) -> None:
    deepest = opener * MAX_NESTING + "x" + closer * MAX_NESTING
    assert parse(deepest).names == frozenset({"x"})
    too_deep = opener * (MAX_NESTING + 1) + "x" + closer * (MAX_NESTING + 1)
    with pytest.raises(ExpressionError, match="nests deeper") as caught:
        parse(too_deep)
    # The column points into the opener that went one level too deep.
    assert len(opener) * MAX_NESTING < caught.value.column <= len(opener) * (MAX_NESTING + 1)


@pytest.mark.parametrize(
    ("opener", "closer"),
    [
        ("a or b and c == d + e * (", ")"),
        ("a * (b + ", ")"),
        ("((", ") * b + c == d and e or f)"),
        ("(x, ", ")"),
        ("lower(x + ", ")"),
    ],
)
def test_operator_nesting_is_bounded(opener: str, closer: str) -> None:
    # Operators nest too: each pattern hits a limit long before the stack could overflow.
    for count in range(1, 80):
        try:
            parse(opener * count + "x" + closer * count)
        except ExpressionError as error:
            assert "deeper than" in error.problem
            break
    else:
        pytest.fail("no depth limit was reached")


def test_tree_depth_limit() -> None:
    # Parenthesised left operands stack five tree levels per parenthesis.
    text = "((" * 30 + "x" + ") * b + c == d and e or f)" * 30
    with pytest.raises(ExpressionError, match=f"deeper than {MAX_DEPTH} levels"):
        parse(text)


def test_parse_on_a_nearly_exhausted_stack_raises_expression_error() -> None:
    text = "(" * MAX_NESTING + "x" + ")" * MAX_NESTING
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 60)
    try:
        with pytest.raises(ExpressionError, match="nests too deeply"):
            parse(text)
    finally:
        sys.setrecursionlimit(limit)


# -- totality ------------------------------------------------------------------------------


class Hostile:
    """A value whose every dunder raises, to prove evaluation stays total."""

    def __bool__(self) -> bool:
        raise RuntimeError("bool")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __contains__(self, item: object) -> bool:
        raise RuntimeError("contains")


@pytest.mark.parametrize(
    "text",
    [
        "h",
        "not h",
        "h == 1",
        "h != 1",
        "h and 1",
        "h or 1",
        "str(h)",
        "1 in [h]",
        "h in [1]",
        "[h] == [1]",
        "h in m",
        "lower(h)",
        "len(h)",
        "-h",
        "h + 1",
    ],
)
def test_evaluate_never_raises_on_hostile_values(text: str) -> None:
    variables = {"h": Hostile(), "m": {"k": 1}}
    expression = parse(text)
    expression.evaluate(variables)
    assert expression.truthy(variables) in (True, False)


def test_evaluate_tolerates_a_non_mapping() -> None:
    expression = parse("a == 1")
    assert expression.evaluate(None) is None  # type: ignore[arg-type]
    assert expression.truthy([1, 2]) is False  # type: ignore[arg-type]


def test_self_referential_values_do_not_raise() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    assert parse("a == b").evaluate({"a": loop, "b": loop}) in (True, False)
    assert parse("a in b").evaluate({"a": 2, "b": loop}) is False


def test_truthy() -> None:
    assert parse("n").truthy(VARS) is True
    assert parse("empty").truthy(VARS) is False
    assert parse("missing").truthy(VARS) is False
    assert parse("items").truthy(VARS) is True
    assert parse("[]").truthy(VARS) is False
    assert parse("'a' < 3").truthy(VARS) is False


def test_constant_subexpressions_still_evaluate_correctly() -> None:
    assert ev("x > 2 * 3 - 1", {"x": 6}) is True
    assert ev("x in [1 + 1, 3]", {"x": 2}) is True
    assert ev("-(1 / 0) == null") is True
