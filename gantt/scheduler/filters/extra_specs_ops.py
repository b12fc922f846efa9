"""Matching of Nova-style extra-spec expressions against host values.

An expression is a value, optionally prefixed by an operator:

* no operator: string equality
* ``= N``: the host's number is at least N (Nova keeps this meaning)
* ``== N``, ``!= N``, ``>= N``, ``<= N``: numeric comparisons
* ``s== x``, ``s!= x``, ``s< x``, ``s<= x``, ``s> x``, ``s>= x``: strings
* ``<in> x``: x is a substring of the host's value
* ``<all-in> a b``: every word is among the host's words
* ``<or> a <or> b``: the host's value equals one of them
"""

import operator

_NUMERIC = {
    "=": operator.ge, "==": operator.eq, "!=": operator.ne,
    ">=": operator.ge, "<=": operator.le,
}
_STRING = {
    "s==": operator.eq, "s!=": operator.ne, "s<": operator.lt,
    "s<=": operator.le, "s>": operator.gt, "s>=": operator.ge,
}


def _as_number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def match(value, expression):
    """Whether a host's ``value`` (a string, or None) satisfies it."""
    if value is None:
        return False
    value = str(value)
    words = expression.split()
    if not words:
        return value == expression
    op = words[0]
    if op == "<or>":
        return value in words[1::2]
    if op == "<in>":
        return " ".join(words[1:]) in value
    if op == "<all-in>":
        return set(words[1:]).issubset(value.split())
    if op in _STRING and len(words) > 1:
        return _STRING[op](value, " ".join(words[1:]))
    if op in _NUMERIC and len(words) > 1:
        have, want = _as_number(value), _as_number(words[1])
        if have is None or want is None:
            return False
        return _NUMERIC[op](have, want)
    return value == expression
