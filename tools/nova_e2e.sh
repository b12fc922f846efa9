#!/usr/bin/env bash
# Nova 34's own scheduler clients against a real gantt-scheduler serving
# Nova's scheduler topic ([nova] enabled), over this machine's RabbitMQ,
# on MariaDB and PostgreSQL (see doc/source/admin/nova.rst). Shares the
# cached virtualenv of tools/nova_diff.sh (.venv-nova-diff: Gantt and
# nova 34, pinned by gantt/tests/nova_diff/constraints.txt). Extra arguments go to
# pytest, e.g. -x, -k mysql. GANTT_NOVA_E2E_TESTS names another folder
# to run in the same virtualenv (tools/nova_minicloud.sh does).
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
    -p no:cacheprovider "${GANTT_NOVA_E2E_TESTS:-gantt/tests/nova_e2e}" "$@"
