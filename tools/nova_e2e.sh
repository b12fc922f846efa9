#!/usr/bin/env bash
# Nova 34's own scheduler clients against a real gantt-scheduler serving
# Nova's scheduler topic ([nova] enabled), over this machine's RabbitMQ,
# on MariaDB and PostgreSQL (see doc/source/admin/nova.rst). Shares the
# virtualenv of tools/nova_diff.sh (.venv-nova-diff: Gantt and nova 34,
# pinned by gantt/tests/nova_diff/constraints.txt). Extra arguments go to
# pytest, e.g. -x, -k mysql.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_NOVA_DIFF_VENV:-$ROOT/.venv-nova-diff}
. "$ROOT/tools/oracle_venv.sh"
oracle_venv "$VENV" "$ROOT/gantt/tests/nova_diff/constraints.txt" nova
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/nova_e2e "$@"
