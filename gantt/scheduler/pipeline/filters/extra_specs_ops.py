"""Matching of Nova-style extra-spec expressions against host values.

An expression is a value, optionally prefixed by an operator; as in Nova
(``nova/scheduler/filters/extra_specs_ops.py``) an operator compares with
its first operand only, and an operator with no operand never matches:

* no operator: string equality
* ``= N``: the host's number is at least N (Nova keeps this meaning)
* ``== N``, ``!= N``, ``>= N``, ``<= N``: numeric comparisons (a value
  that is not a number never matches; Nova raises an error instead)
* ``s== x``, ``s!= x``, ``s< x``, ``s<= x``, ``s> x``, ``s>= x``: strings
* ``<in> x``: x is a substring of the host's value
* ``<all-in> a b``: every word is among the host's words, or among the
  items of a host value that is a list (whole words: Nova tests substrings
  of the value's text, so ``avx`` would match ``avx2``)
* ``<or> a <or> b``: the host's value equals one of them

A host value that is not a string is compared as ``str()`` of it, as
Nova does.
"""

import operator


def _numeric(compare):
    def check(value, operand):
        try:
            return compare(float(value), float(operand))
        except (TypeError, ValueError):
            return False
    return check


def _all_in(value, operands):
    if isinstance(value, (list, tuple)):
        have = {str(item) for item in value}
    else:
        have = set(str(value).split())
    return set(operands).issubset(have)


_OPERATORS = {
    "=": _numeric(operator.ge), "==": _numeric(operator.eq),
    "!=": _numeric(operator.ne), ">=": _numeric(operator.ge),
    "<=": _numeric(operator.le),
    "s==": operator.eq, "s!=": operator.ne, "s<": operator.lt,
    "s<=": operator.le, "s>": operator.gt, "s>=": operator.ge,
    "<in>": lambda value, operand: operand in value,
}


def match(value, expression):
    """Whether a host's ``value`` (a string, a list, or None) satisfies
    ``expression``."""
    if value is None:
        return False
    words = expression.split()
    op, operands = (words[0], words[1:]) if words else (None, [])
    if op == "<or>":
        return str(value) in operands[::2]
    if op == "<all-in>":
        return bool(operands) and _all_in(value, operands)
    if op not in _OPERATORS:
        return str(value) == expression
    return bool(operands) and _OPERATORS[op](str(value), operands[0])
