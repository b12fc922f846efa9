#!/usr/bin/env bash
# The differential test of Gantt's allocation-candidates solver against the
# real OpenStack Placement, run in-process (see
# gantt/tests/placement_diff/README.rst). Needs only python3: makes or
# reuses a virtualenv with Gantt and openstack-placement, cached outside
# the checkout and linked as .venv-placement (see tools/oracle_venv.sh),
# then runs the test. Extra arguments go to pytest,
# e.g. -x, -k w7, or -n 2 (pytest-xdist).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_PLACEMENT_VENV:-$ROOT/.venv-placement}" placement yes \
    "$ROOT/setup.cfg" "$ROOT/pyproject.toml" -- \
    -e "$ROOT[test]" openstack-placement wsgi-intercept
VENV=$ORACLE_VENV
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider \
    gantt/tests/placement_diff "$@"
