"""Under mutmut, a deeper recursion limit.

mutmut (``tools/mutation.sh``) routes every call of a mutated module
through a trampoline of several frames. The parser of
:mod:`gantt.scheduler.pipeline.expressions` descends a dozen functions
per nesting level and refuses nesting beyond ``MAX_DEPTH`` (32): about
400 frames without mutmut, but beyond Python's default limit of 1000
with the trampolines, so that the hostile-nesting test would fail with
no mutant active and mutmut would refuse the whole run. The limit is
raised only when mutmut runs the tests (``MUTANT_UNDER_TEST`` set).
"""

import os
import sys

if "MUTANT_UNDER_TEST" in os.environ:
    sys.setrecursionlimit(20000)
