"""extra_specs_ops: numeric operators and an empty expression. (Written to
kill mutants: see doc/source/contributor/mutation.rst.)"""

import pytest

from gantt.scheduler.pipeline.filters import extra_specs_ops


@pytest.mark.parametrize("value, expression, expected", [
    ("4", ">= 2", True),
    ("1", ">= 2", False),
    ("4", "<= 5", True),
    ("4.0", "= 4", True),
    # a value that is no number fails a numeric operator, quietly
    ("x", ">= 2", False),
    ("4", ">= x", False),
    # an empty expression matches only an empty value
    ("", "", True),
    ("a", "", False),
])
def test_numeric_and_empty_expressions(value, expression, expected):
    assert extra_specs_ops.match(value, expression) is expected
