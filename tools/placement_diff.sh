#!/usr/bin/env bash
# The differential test of Gantt's allocation-candidates solver against the
# real OpenStack Placement, run in-process (see
# gantt/tests/placement_diff/README.rst). Needs only python3: creates or
# refreshes the virtualenv .venv-placement at the repo root with Gantt and
# openstack-placement, then runs the test. Extra arguments go to pytest,
# e.g. -x, -k w7, or -n 2 (pytest-xdist).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_PLACEMENT_VENV:-$ROOT/.venv-placement}
PYTHON=${PYTHON:-python3}
PACKAGES=(openstack-placement wsgi-intercept)
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.gantt-placement-installed"
WANT=$( (sha1sum "$ROOT/setup.cfg" "$ROOT/pyproject.toml";
         echo "${PACKAGES[*]}") | sha1sum | cut -c1-40)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "==> installing Gantt and openstack-placement into $VENV" \
        "(a minute or two on a fresh machine)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$ROOT[test]" "${PACKAGES[@]}"
    echo "$WANT" > "$STAMP"
fi
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider \
    gantt/tests/placement_diff "$@"
