"""Backend expressions: Cinder's filter_function and goodness_function.

A volume backend may report a ``filter_function`` (DriverFilter: does it
take this volume?) and a ``goodness_function`` (GoodnessWeigher: 0 to 100,
how good a choice is it?). They are written in the little language of
Cinder's evaluator (``cinder/scheduler/evaluator/evaluator.py``); this
module parses and evaluates that language itself, never with ``eval``:
a string becomes a tree of tuples, and the tree is walked over plain
numbers, booleans and strings.

The language, loosest binding first::

    or     a or b, a OR b, a || b
    and    a and b, a AND b, a && b
    ?:     cond ? a : b            (not chained without parentheses)
    cmp    < <= > >= == != <>      (chained as in Python: 1 < x < 3)
    not    not a, NOT a, !a
    + -    sums
    * /    products (/ is always a float division)
    sign   -a, +a
    ^      power, right-associative (2^3^2 is 2^9; -2^2 is -4)
    f(..)  abs(x), max(a, b, ...), min(a, b, ...)

An operand is a number (``12``, ``1.5``), a quoted string, a variable
``family.name`` (``stats``, ``capabilities``, ``extra``, ``volume``,
``qos``: one dot, letters and ``_`` only, as in Cinder) or another word,
which is the string it spells. As in Cinder, a value is read as an int
when ``int()`` takes it (a float 10.7 reads as 10, True as 1), else as a
float, else as a string; a missing variable is an error.

Hostile input is refused before anything is computed beyond a bound: an
expression longer than :data:`MAX_LENGTH` or nested deeper than
:data:`MAX_DEPTH`, a power whose result would exceed :data:`MAX_BITS`
bits, string repetition (``"a" * n``), complex results. Every refusal and
every runtime error (division by zero, comparing a string with a number)
is an :class:`ExpressionError`; the callers fail the backend (DriverFilter)
or weigh it 0 (GoodnessWeigher), as Cinder does on an exception.
Differences from Cinder's evaluator are listed in
``doc/source/admin/cinder-diff.rst``.
"""

import math
import operator
import re

MAX_LENGTH = 4096
MAX_DEPTH = 32
MAX_BITS = 4096

FUNCTIONS = {"abs": abs, "max": max, "min": min}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
            "<>": operator.ne}
_AND = frozenset(("and", "AND", "&&"))
_OR = frozenset(("or", "OR", "||"))
_NOT = frozenset(("not", "NOT", "!"))
_VARIABLE = re.compile(r"^[a-zA-Z_]+\.[a-zA-Z_]+$")
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>\d+\.\d+|\d+)
  | (?P<str>'[^']*'|"[^"]*")
  | (?P<op><=|>=|==|!=|<>|&&|\|\||[-+*/^?:,()<>!])
  | (?P<word>[A-Za-z_.]+)
)""", re.VERBOSE)


class ExpressionError(ValueError):
    """The expression cannot be parsed, is refused, or fails to evaluate."""


def tokenize(text):
    """``[(kind, text)]`` of ``text``; kinds: num, str, op, word."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError("expression longer than %d" % MAX_LENGTH)
    tokens, pos, end = [], 0, len(text.rstrip())
    while pos < end:
        found = _TOKEN.match(text, pos)
        if found is None:
            raise ExpressionError("unexpected %r at %d" % (text[pos], pos))
        kind = found.lastgroup
        value = found.group(kind)
        if kind == "word" and value in _AND | _OR | _NOT:
            kind = "op"
        tokens.append((kind, value))
        pos = found.end()
    return tokens


def parse(text):
    """The tree of ``text`` (tuples); raises :class:`ExpressionError`."""
    parser = _Parser(tokenize(str(text)))
    tree = parser.disjunction()
    if parser.peek() is not None:
        raise ExpressionError("unexpected %r" % (parser.peek()[1],))
    return tree


class _Parser:
    """Recursive descent over the tokens, one method per level."""

    def __init__(self, tokens):
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, *ops):
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ops:
            self.pos += 1
            return token[1]
        return None

    def expect(self, op):
        if self.take(op) is None:
            raise ExpressionError("expected %r" % op)

    def _chain(self, ops, tag, below):
        items = [below()]
        while self.take(*ops):
            items.append(below())
        return items[0] if len(items) == 1 else (tag, tuple(items))

    def disjunction(self):
        return self._chain(_OR, "or", self.conjunction)

    def conjunction(self):
        return self._chain(_AND, "and", self.ternary)

    def ternary(self):
        condition = self.comparison()
        if not self.take("?"):
            return condition
        then = self.comparison()
        self.expect(":")
        other = self.comparison()
        if self.peek() == ("op", "?"):
            raise ExpressionError("chained ?: needs parentheses")
        return ("if", condition, then, other)

    def comparison(self):
        first = self.negation()
        pairs = []
        while True:
            op = self.take(*_COMPARE)
            if op is None:
                break
            pairs.append((op, self.negation()))
        return ("cmp", first, tuple(pairs)) if pairs else first

    def negation(self):
        if self.take(*_NOT):
            return ("not", self._nested(self.negation))
        return self.sum()

    def sum(self):
        return self._fold(("+", "-"), self.product)

    def product(self):
        return self._fold(("*", "/"), self.factor)

    def _fold(self, ops, below):
        # flat, left to right: a long sum is no deeper than one term
        first, pairs = below(), []
        while True:
            op = self.take(*ops)
            if op is None:
                return ("fold", first, tuple(pairs)) if pairs else first
            pairs.append((op, below()))

    def factor(self):
        sign = self.take("+", "-")
        if sign:
            return ("sign", sign, self._nested(self.factor))
        base = self.atom()
        if self.take("^"):
            return ("arith", "^", base, self._nested(self.factor))
        return base

    def _nested(self, level):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError("nested deeper than %d" % MAX_DEPTH)
        try:
            return level()
        finally:
            self.depth -= 1

    def atom(self):
        token = self.peek()
        if token is None:
            raise ExpressionError("unexpected end of expression")
        self.pos += 1
        kind, text = token
        if kind == "op" and text == "(":
            inner = self._nested(self.disjunction)
            self.expect(")")
            return inner
        if kind == "word" and self.take("("):
            args = [self._nested(self.disjunction)]
            while self.take(","):
                args.append(self._nested(self.disjunction))
            self.expect(")")
            return ("call", text, tuple(args))
        if kind in ("num", "word"):
            return ("const", text)
        if kind == "str":
            return ("const", text[1:-1])
        raise ExpressionError("unexpected %r" % text)


def evaluate(tree, variables):
    """The value of a parsed ``tree``; ``variables``: ``{family: dict}``.
    """
    return _EVAL[tree[0]](tree, variables)


def _coerce(value):
    """Cinder's reading of an operand: int, else float, else string."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
        except (TypeError, OverflowError) as exc:
            raise ExpressionError(
                "cannot read %r: %s" % (value, exc)) from exc
    return value.replace('"', "").replace("'", "")


def _const(tree, variables):
    text = tree[1]
    if _VARIABLE.match(text):
        family, name = text.split(".")
        try:
            return _coerce(variables[family][name])
        except (KeyError, TypeError):
            raise ExpressionError("no such variable %r" % text) from None
    return _coerce(text)


def _number(value):
    if isinstance(value, (int, float)):       # bool is an int
        return value
    raise ExpressionError("not a number: %r" % (value,))


def _bounded(value):
    if isinstance(value, complex):
        raise ExpressionError("complex result")
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise ExpressionError("result larger than %d bits" % MAX_BITS)
    return value


def _power(base, exponent):
    base, exponent = _number(base), _number(exponent)
    if abs(base) > 1 and exponent > 0 and (
            exponent * math.log2(abs(base)) > MAX_BITS):
        raise ExpressionError("power larger than %d bits" % MAX_BITS)
    return pow(base, exponent)


def _divide(left, right):
    return _number(left) / float(_number(right))


def _add(left, right):
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    return _number(left) + _number(right)


_ARITH = {"+": _add,
          "-": lambda a, b: _number(a) - _number(b),
          "*": lambda a, b: _number(a) * _number(b),
          "/": _divide, "^": _power}


def _arith(tree, variables):
    _tag, op, left, right = tree
    return _apply(op, evaluate(left, variables), evaluate(right, variables))


def _apply(op, left, right):
    try:
        return _bounded(_ARITH[op](left, right))
    except (ZeroDivisionError, OverflowError) as exc:
        raise ExpressionError("%s: %s" % (op, exc)) from exc


def _fold(tree, variables):
    _tag, first, pairs = tree
    value = evaluate(first, variables)
    for op, operand in pairs:
        value = _apply(op, value, evaluate(operand, variables))
    return value


def _sign(tree, variables):
    value = _number(evaluate(tree[2], variables))
    return -1 * value if tree[1] == "-" else value


def _compare(tree, variables):
    _tag, first, pairs = tree
    left = evaluate(first, variables)
    for op, operand in pairs:
        right = evaluate(operand, variables)
        try:
            if not _COMPARE[op](left, right):
                return False
        except TypeError as exc:
            raise ExpressionError("%s: %s" % (op, exc)) from exc
        left = right
    return True


def _call(tree, variables):
    _tag, name, args = tree
    function = FUNCTIONS.get(name)
    if function is None:
        raise ExpressionError("no such function %r" % name)
    values = [evaluate(arg, variables) for arg in args]
    try:
        return function(*values)
    except (TypeError, ValueError) as exc:   # max(""): an empty sequence
        raise ExpressionError("%s: %s" % (name, exc)) from exc


def _all_of(tree, variables):
    # every operand is evaluated (an error anywhere fails, as in Cinder)
    values = [evaluate(item, variables) for item in tree[1]]
    result = values[0]
    for value in values[1:]:
        result = (result and value) if tree[0] == "and" else (
            result or value)
    return result


def _if(tree, variables):
    _tag, condition, then, other = tree
    return evaluate(then if evaluate(condition, variables) else other,
                    variables)


def _not(tree, variables):
    return not evaluate(tree[1], variables)


_EVAL = {"const": _const, "arith": _arith, "fold": _fold, "sign": _sign,
         "cmp": _compare, "not": _not, "call": _call, "and": _all_of,
         "or": _all_of, "if": _if}
