#!/usr/bin/env bash
# The differential test of Gantt's router and DHCP placement against the
# real Neutron agent schedulers (see doc/source/admin/networks.rst). Needs
# only python3: creates or refreshes the virtualenv .venv-neutron-diff at
# the repo root with neutron alone (pinned by
# gantt/tests/neutron_diff/constraints.txt; Gantt is not installed there),
# then runs the test from Gantt's own .venv, which calls Neutron's side in
# that virtualenv. Extra arguments go to pytest, e.g. -x, -k 17.
set -euo pipefail
. "$(dirname "$0")/bootstrap.sh"
NVENV=${GANTT_NEUTRON_DIFF_VENV:-$ROOT/.venv-neutron-diff}
CONSTRAINTS=$ROOT/gantt/tests/neutron_diff/constraints.txt
if [ ! -x "$NVENV/bin/python" ]; then
    echo "==> creating virtualenv $NVENV"
    "$PYTHON" -m venv "$NVENV"
fi
STAMP="$NVENV/.gantt-neutron-diff-installed"
WANT=$(sha1sum "$CONSTRAINTS" | cut -c1-40)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "==> installing neutron into $NVENV (two minutes on a fresh machine)"
    "$NVENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$CONSTRAINTS" neutron
    echo "$WANT" > "$STAMP"
fi
cd "$ROOT"
GANTT_NEUTRON_PYTHON="$NVENV/bin/python" exec "$VENV/bin/python" \
    -m pytest -p no:cacheprovider gantt/tests/neutron_diff "$@"
