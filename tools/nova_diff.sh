#!/usr/bin/env bash
# The differential test of Gantt's filters and weighers against the real
# Nova 34 ones, in-process (see doc/source/admin/nova-diff.rst). Needs only
# python3: makes or reuses a virtualenv with Gantt and nova (pinned by
# gantt/tests/nova_diff/constraints.txt; they co-install), cached outside
# the checkout and linked as .venv-nova-diff (see tools/oracle_venv.sh),
# then runs the test. Extra arguments go to pytest, e.g.
# -x, -k w17.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$ROOT/gantt/tests/nova_diff/constraints.txt
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_NOVA_DIFF_VENV:-$ROOT/.venv-nova-diff}" nova-diff yes \
    "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" -- \
    -c "$CONSTRAINTS" -e "$ROOT[test]" nova
VENV=$ORACLE_VENV
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/nova_diff "$@"
