#!/usr/bin/env bash
# The differential test of Gantt's volume filters and weighers against the
# real Cinder 29 ones, in-process (see doc/source/admin/cinder-diff.rst).
# Needs only python3: creates or refreshes the virtualenv .venv-cinder-diff
# at the repo root with Gantt and cinder (pinned by
# gantt/tests/cinder_diff/constraints.txt; they co-install), then runs the
# test. Extra arguments go to pytest, e.g. -x, -k 17.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_CINDER_DIFF_VENV:-$ROOT/.venv-cinder-diff}
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "$VENV" "$ROOT/gantt/tests/cinder_diff/constraints.txt" cinder
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/cinder_diff "$@"
