"""Nova-style extra-spec expressions matched against host values."""

import pytest

from gantt.scheduler.pipeline.filters import extra_specs_ops


@pytest.mark.parametrize("value, expression, expected", [
    # no operator: string equality
    ("QEMU", "QEMU", True),
    ("QEMU", "qemu", False),
    ("1", "1", True),
    # "=": at least (Nova's meaning)
    ("16", "= 8", True),
    ("8", "= 8", True),
    ("4", "= 8", False),
    ("8.0", "= 8", True),
    # numeric comparisons
    ("8", "== 8", True),
    ("8", "== 8.0", True),
    ("9", "== 8", False),
    ("9", "!= 8", True),
    ("8", "!= 8", False),
    ("9", ">= 8", True),
    ("7", ">= 8", False),
    ("7", "<= 8", True),
    ("9", "<= 8", False),
    ("abc", ">= 8", False),      # not a number never matches
    ("8", ">= abc", False),
    # string comparisons
    ("kvm", "s== kvm", True),
    ("kvm", "s== qemu", False),
    ("kvm", "s!= qemu", True),
    ("abc", "s< abd", True),
    ("abd", "s< abc", False),
    ("abc", "s<= abc", True),
    ("abd", "s> abc", True),
    ("abc", "s>= abd", False),
    ("10", "s< 9", True),        # strings, not numbers
    # substring and word sets
    ("avx avx2 sse4.2", "<in> avx2", True),
    ("avx sse4.2", "<in> avx2", False),
    ("avx avx2 sse4.2", "<all-in> avx sse4.2", True),
    ("avx sse4.2", "<all-in> avx avx2", False),
    ("avx2", "<all-in> avx", False),      # whole words, not substrings
    # a list value (a JSON capability's list): its items are the words
    (["avx", "avx2"], "<all-in> avx2 avx", True),
    (["avx", "avx2"], "<all-in> sse4.2", False),
    (["avx2"], "<all-in> avx", False),
    (["avx", "avx2"], "<in> avx2", True),        # the list's text
    # as Nova's, an operator compares with its first operand only
    ("avx avx2", "<in> avx2 sse", True),
    ("kvm", "s== kvm qemu", True),
    ("9", ">= 8 100", True),
    # any of
    ("x86_64", "<or> x86_64 <or> aarch64", True),
    ("aarch64", "<or> x86_64 <or> aarch64", True),
    ("ppc64le", "<or> x86_64 <or> aarch64", False),
    # an operator without an operand never matches (as in Nova)
    ("=", "=", False),
    ("8", ">=", False),
    ("x", "<all-in>", False),
    ("x", "<or>", False),
    # no value on the host never matches, whatever the expression
    (None, "QEMU", False),
    (None, "!= 8", False),
    (None, "s!= kvm", False),
    # non-string host values are compared as strings
    (8, "8", True),
    (8, ">= 4", True),
])
def test_match(value, expression, expected):
    assert extra_specs_ops.match(value, expression) is expected
