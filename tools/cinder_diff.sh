#!/usr/bin/env bash
# The differential test of Gantt's volume filters and weighers against the
# real Cinder 29 ones, in-process (see doc/source/admin/cinder-diff.rst).
# Needs only python3: makes or reuses a virtualenv with Gantt and cinder
# (pinned by gantt/tests/cinder_diff/constraints.txt; they co-install),
# cached outside the checkout and linked as .venv-cinder-diff (see
# tools/oracle_venv.sh), then runs the test. Extra arguments go to pytest, e.g. -x, -k 17.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$ROOT/gantt/tests/cinder_diff/constraints.txt
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_CINDER_DIFF_VENV:-$ROOT/.venv-cinder-diff}" cinder-diff \
    yes "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" -- \
    -c "$CONSTRAINTS" -e "$ROOT[test]" cinder
VENV=$ORACLE_VENV
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/cinder_diff "$@"
