#!/usr/bin/env bash
# Placement's own gabbi tests against Gantt's Placement API, in-process
# (see gantt/tests/placement_gabbits/README.rst). Needs only python3:
# makes or reuses a virtualenv with Gantt (editable), openstack-placement
# (whose package holds the YAML files), gabbi and, for the osc-placement
# functional test, osc-placement, cached outside the checkout and linked
# as .venv-gabbits (see tools/oracle_venv.sh); then runs them and prints
# passed/total per file. Extra arguments go to
# the runner, e.g. --check-floor, --floor 100, -v, --json out.json, or
# file names. "tools/placement_gabbits.sh osc [pytest args]" runs the
# osc-placement CLI test against a gantt-api process instead, and
# "tools/placement_gabbits.sh tests [pytest args]" every pytest test of
# the harness (the worlds' comparison with Placement's, and that one).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$ROOT/gantt/tests/placement_gabbits/constraints.txt
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_GABBITS_VENV:-$ROOT/.venv-gabbits}" gabbits yes \
    "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" -- \
    -c "$CONSTRAINTS" -e "$ROOT[test]" openstack-placement gabbi \
    wsgi-intercept oslotest osc-placement python-openstackclient
VENV=$ORACLE_VENV
cd "$ROOT"
if [ "${1:-}" = tests ]; then
    shift
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider \
        gantt/tests/placement_gabbits "$@"
fi
if [ "${1:-}" = osc ]; then
    shift
    exec "$VENV/bin/python" -m pytest -p no:cacheprovider \
        gantt/tests/placement_gabbits/test_osc_placement.py "$@"
fi
exec "$VENV/bin/python" -m gantt.tests.placement_gabbits.run "$@"
