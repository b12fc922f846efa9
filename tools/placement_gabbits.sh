#!/usr/bin/env bash
# Placement's own gabbi tests against Gantt's Placement API, in-process
# (see gantt/tests/placement_gabbits/README.rst). Needs only python3:
# creates or refreshes the virtualenv .venv-gabbits at the repo root with
# Gantt (editable), openstack-placement (whose package holds the YAML
# files), gabbi and, for the osc-placement functional test, osc-placement;
# then runs them and prints passed/total per file. Extra arguments go to
# the runner, e.g. --check-floor, --floor 100, -v, --json out.json, or
# file names. "tools/placement_gabbits.sh osc [pytest args]" runs the
# osc-placement CLI test against a gantt-api process instead.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_GABBITS_VENV:-$ROOT/.venv-gabbits}
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$ROOT/gantt/tests/placement_gabbits/constraints.txt
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.gantt-gabbits-installed"
WANT=$(sha1sum "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" |
       sha1sum | cut -c1-40)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "==> installing Gantt, openstack-placement and gabbi into $VENV" \
        "(a minute or two on a fresh machine)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$CONSTRAINTS" -e "$ROOT[test]" openstack-placement gabbi \
        wsgi-intercept oslotest osc-placement python-openstackclient
    echo "$WANT" > "$STAMP"
fi
cd "$ROOT"
if [ "${1:-}" = osc ]; then
    shift
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider \
        gantt/tests/placement_gabbits/test_osc_placement.py "$@"
fi
exec "$VENV/bin/python" -m gantt.tests.placement_gabbits.run "$@"
