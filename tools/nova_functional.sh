#!/usr/bin/env bash
# Nova 34's own functional tests (nova/tests/functional, shipped in the
# nova package) with Gantt in place of nova-scheduler and placement-api
# (see doc/source/admin/nova-functional.rst and
# gantt/tests/nova_functional/README.rst). Makes or reuses a virtualenv
# with Gantt (editable), nova 34, openstack-placement (its fixture module
# is imported by nova's) and nova's test libraries, cached outside the
# checkout and linked as .venv-nova-functional (tools/oracle_venv.sh;
# GANTT_ORACLE_CACHE=none keeps it in the checkout); then runs the
# selected Nova test modules and prints passed/total per file. Extra
# arguments go to the runner, e.g. --floor 10, -k ServerGroup, or module
# names such as nova.tests.functional.test_server_group.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
NOVA_CONSTRAINTS=$ROOT/gantt/tests/nova_diff/constraints.txt
CONSTRAINTS=$ROOT/gantt/tests/nova_functional/constraints.txt
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "${GANTT_NOVA_FUNCTIONAL_VENV:-$ROOT/.venv-nova-functional}" \
    nova-functional yes "$ROOT/setup.cfg" "$ROOT/pyproject.toml" \
    "$NOVA_CONSTRAINTS" "$CONSTRAINTS" -- \
    -c "$NOVA_CONSTRAINTS" -c "$CONSTRAINTS" -e "$ROOT[test]" nova \
    openstack-placement wsgi-intercept oslotest testscenarios ddt \
    requests-mock python-barbicanclient
VENV=$ORACLE_VENV
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning \
    -m gantt.tests.nova_functional.run "$@"
