"""A parsed expression evaluated over many backends at once (numpy).

:func:`evaluate` walks the same tree as :func:`.expressions.evaluate`,
but each operand is a column: ``(kind, array, unsure)`` with one value
per backend. ``kind`` is the Python type every value has (``b`` bool,
``i`` int, ``f`` float, ``s`` str) or ``e`` when the column has no
value; ``unsure`` marks the backends whose value the columns cannot give
exactly (a runtime error such as a division by zero, a missing
variable, an int that could overflow, a mix of types). The caller
evaluates those backends one by one with :mod:`.expressions`, so the
result is always the one of the per-backend path; a tree this module
does not handle at all (a power of variables, a function of one
argument, string arithmetic...) raises :class:`Unsupported` and every
backend takes the per-backend path.

Backends are grouped first so that, within a group, each variable has
one type (``leaves``: ``{variable: (kind, array, unsure)}``).
"""

import functools

import numpy as np

from gantt.scheduler.pipeline import expressions

#: ints beyond this are not trusted to numpy (float64 holds them exactly)
SAFE_INT = 2 ** 52
_NUMERIC = frozenset("bif")


class Unsupported(Exception):
    """The tree needs the per-backend path for every backend."""


def variables_of(tree):
    """The variable names (``family.name``) ``tree`` reads."""
    found = set()

    def walk(node):
        if not isinstance(node, tuple):
            return
        if len(node) == 2 and node[0] == "const":
            if expressions._VARIABLE.match(node[1]):
                found.add(node[1])
            return
        for item in node:
            walk(item)
    walk(tree)
    return found


def kind_of(value):
    """The column kind of one coerced Python value."""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i" if abs(value) < SAFE_INT else "e"
    if isinstance(value, float):
        return "f"
    return "s" if isinstance(value, str) else "e"


def column(kind, values):
    """A column of ``kind`` from Python values."""
    n = len(values)
    if kind == "e":
        return ("e", None, np.ones(n, dtype=bool))
    dtype = {"b": bool, "i": np.int64, "f": float, "s": object}[kind]
    array = np.empty(n, dtype=dtype)
    array[:] = values
    return (kind, array, np.zeros(n, dtype=bool))


def evaluate(tree, leaves, n):
    """``(kind, array, unsure)`` of ``tree`` over ``n`` backends."""
    if _constant_value(tree) is not _VARIES:
        return _constant(tree, n)
    return _VEC[tree[0]](tree, leaves, n)


_VARIES = object()


@functools.lru_cache(maxsize=4096)
def _constant_value(tree):
    """The value (or ExpressionError) of a tree that reads no variable;
    :data:`_VARIES` for one that does."""
    if variables_of(tree):
        return _VARIES
    try:
        return expressions.evaluate(tree, {})
    except expressions.ExpressionError as exc:
        return exc


def _constant(tree, n):
    value = _constant_value(tree)
    if isinstance(value, expressions.ExpressionError):
        return ("e", None, np.ones(n, dtype=bool))
    kind = kind_of(value)
    if kind == "e":
        return ("e", None, np.ones(n, dtype=bool))
    dtype = {"b": bool, "i": np.int64, "f": float, "s": object}[kind]
    return (kind, np.full(n, value, dtype=dtype), np.zeros(n, dtype=bool))


def _const(tree, leaves, n):
    return leaves[tree[1]]


def _numeric(col):
    kind, array, unsure = col
    if kind == "e":
        return col
    if kind not in _NUMERIC:
        raise Unsupported("not a number")
    if kind == "b":
        return ("i", array.astype(np.int64), unsure)
    return col


def _big(col, limit):
    kind, array, _unsure = col
    if kind == "i":
        return np.abs(array) >= limit
    return np.zeros(len(array), dtype=bool)


def _arith2(op, left, right, n):
    left, right = _numeric(left), _numeric(right)
    if "e" in (left[0], right[0]):
        return column("e", [None] * n)
    unsure = left[2] | right[2]
    mixed = left[0] != right[0]
    limit = 2 ** 31 if op == "*" else SAFE_INT
    if op == "/" or mixed:
        limit = min(limit, SAFE_INT)
    unsure = unsure | _big(left, limit) | _big(right, limit)
    a, b = left[1], right[1]
    with np.errstate(all="ignore"):
        if op == "/":
            zero = b == 0
            value = a.astype(float) / np.where(zero, 1, b).astype(float)
            return ("f", value, unsure | zero)
        if mixed:
            a, b = a.astype(float), b.astype(float)
        value = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](a, b)
    kind = "f" if mixed else left[0]
    if kind == "i":
        value = np.where(unsure, 0, value)
    return (kind, value, unsure)


def _arith(tree, leaves, n):
    _tag, op, left, right = tree
    if op == "^":
        raise Unsupported("power of a variable")
    return _arith2(op, evaluate(left, leaves, n),
                   evaluate(right, leaves, n), n)


def _fold(tree, leaves, n):
    _tag, first, pairs = tree
    value = evaluate(first, leaves, n)
    for op, operand in pairs:
        value = _arith2(op, value, evaluate(operand, leaves, n), n)
    return value


def _sign(tree, leaves, n):
    value = evaluate(tree[2], leaves, n)
    kind, array, unsure = _numeric(value)
    if tree[1] == "+" or kind == "e":
        return value
    return (kind, -array, unsure)


def _truth(col):
    kind, array, _unsure = col
    if kind == "s":
        return np.array([bool(v) for v in array], dtype=bool)
    return array != 0 if kind != "b" else array


def _cmp2(op, left, right, n):
    if "e" in (left[0], right[0]):
        return np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
    unsure = left[2] | right[2]
    strings = (left[0] == "s", right[0] == "s")
    if strings[0] != strings[1]:
        if op in ("==", "!=", "<>"):
            return np.full(n, op != "=="), unsure
        return np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
    a, b = left[1], right[1]
    if not strings[0] and left[0] != right[0] and "f" in (
            left[0], right[0]):
        unsure = unsure | _big(left, SAFE_INT) | _big(right, SAFE_INT)
    value = expressions._COMPARE[op](a, b)
    return np.asarray(value, dtype=bool), unsure


def _compare(tree, leaves, n):
    _tag, first, pairs = tree
    left = evaluate(first, leaves, n)
    alive = np.ones(n, dtype=bool)
    unsure = left[2].copy()
    for op, operand in pairs:
        right = evaluate(operand, leaves, n)
        result, doubt = _cmp2(op, left, right, n)
        unsure |= alive & (doubt | right[2])
        alive &= result
        left = right
    return ("b", alive, unsure)


def _not(tree, leaves, n):
    value = evaluate(tree[1], leaves, n)
    if value[0] == "e":
        return column("e", [None] * n)
    return ("b", ~_truth(value), value[2])


def _call(tree, leaves, n):
    _tag, name, args = tree
    if name not in ("abs", "max", "min") or (
            name != "abs" and len(args) < 2) or (
            name == "abs" and len(args) != 1):
        raise Unsupported("call")
    values = [evaluate(arg, leaves, n) for arg in args]
    if any(v[0] == "e" for v in values):
        return column("e", [None] * n)
    if name == "abs":
        kind, array, unsure = _numeric(values[0])
        return (kind, np.abs(array), unsure)
    return _extreme(name, values)


def _extreme(name, values):
    # as Python's max/min: the first, replaced by any later one greater
    kinds = {v[0] for v in values}
    if len(kinds) != 1 or kinds & {"s"}:
        raise Unsupported("mixed max/min")
    kind, current, unsure = values[0]
    unsure = unsure.copy()
    better = np.greater if name == "max" else np.less
    for _kind, array, doubt in values[1:]:
        current = np.where(better(array, current), array, current)
        unsure |= doubt
    return (kind, current, unsure)


def _all_of(tree, leaves, n):
    values = [evaluate(item, leaves, n) for item in tree[1]]
    if any(v[0] == "e" for v in values):
        return column("e", [None] * n)
    if len({v[0] for v in values}) != 1:
        raise Unsupported("mixed and/or")
    kind, result, unsure = values[0]
    unsure = unsure.copy()
    for _kind, array, doubt in values[1:]:
        truth = _truth((kind, result, None))
        keep = ~truth if tree[0] == "and" else truth
        result = np.where(keep, result, array)
        unsure |= doubt
    return (kind, result, unsure)


def _if(tree, leaves, n):
    _tag, condition, then, other = tree
    cond = evaluate(condition, leaves, n)
    if cond[0] == "e":
        return cond
    truth = _truth(cond)
    yes, no = evaluate(then, leaves, n), evaluate(other, leaves, n)
    unsure = cond[2] | np.where(truth, yes[2], no[2])
    if yes[0] == no[0] or "e" in (yes[0], no[0]):
        kind = no[0] if yes[0] == "e" else yes[0]
        pick = np.where(truth, yes[1], no[1]) if "e" not in (
            yes[0], no[0]) else (yes[1] if no[0] == "e" else no[1])
        return (kind, pick, unsure)
    sure = ~cond[2]
    if truth[sure].all():
        return (yes[0], yes[1], unsure)
    if not truth[sure].any():
        return (no[0], no[1], unsure)
    raise Unsupported("mixed ?:")


_VEC = {"const": _const, "arith": _arith, "fold": _fold, "sign": _sign,
        "cmp": _compare, "not": _not, "call": _call, "and": _all_of,
        "or": _all_of, "if": _if}


def to_python(kind, array, row):
    """The Python value of ``row`` of a column (as the scalar path)."""
    value = array[row]
    if kind == "b":
        return bool(value)
    if kind == "i":
        return int(value)
    if kind == "f":
        return float(value)
    return value
