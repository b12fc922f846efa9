#!/usr/bin/env bash
# The differential test of Gantt's router and DHCP placement against the
# real Neutron agent schedulers (see doc/source/admin/networks.rst). Needs
# only python3: makes or reuses a virtualenv with neutron alone (pinned by
# gantt/tests/neutron_diff/constraints.txt; Gantt is not installed there),
# cached outside the checkout and linked as .venv-neutron-diff (see
# tools/oracle_venv.sh), then runs the test from Gantt's own .venv, which
# calls Neutron's side in that virtualenv. Extra arguments go to pytest, e.g. -x, -k 17.
set -euo pipefail
. "$(dirname "$0")/bootstrap.sh"
CONSTRAINTS=$ROOT/gantt/tests/neutron_diff/constraints.txt
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_NEUTRON_DIFF_VENV:-$ROOT/.venv-neutron-diff}" \
    neutron-diff no "$CONSTRAINTS" -- -c "$CONSTRAINTS" neutron
NVENV=$ORACLE_VENV
cd "$ROOT"
GANTT_NEUTRON_PYTHON="$NVENV/bin/python" exec "$VENV/bin/python" \
    -m pytest -p no:cacheprovider gantt/tests/neutron_diff "$@"
