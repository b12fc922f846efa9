#!/usr/bin/env bash
# The differential test of Gantt's filters and weighers against the real
# Nova 34 ones, in-process (see doc/source/admin/nova-diff.rst). Needs only
# python3: creates or refreshes the virtualenv .venv-nova-diff at the repo
# root with Gantt and nova (pinned by gantt/tests/nova_diff/constraints.txt;
# they co-install), then runs the test. Extra arguments go to pytest, e.g.
# -x, -k w17.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_NOVA_DIFF_VENV:-$ROOT/.venv-nova-diff}
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "$VENV" "$ROOT/gantt/tests/nova_diff/constraints.txt" nova
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/nova_diff "$@"
