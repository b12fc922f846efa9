#!/usr/bin/env bash
# The mini-cloud: real nova-conductor and nova-compute processes (Nova's
# fake virt driver) on this machine's RabbitMQ and MariaDB, with
# gantt-scheduler ([nova] enabled) and gantt-api in nova-scheduler's and
# placement-api's place (see doc/source/admin/nova.rst, "The mini-cloud").
# The virtualenv and the run are tools/nova_e2e.sh's (.venv-nova-diff:
# Gantt and nova 34), on gantt/tests/nova_minicloud. Extra arguments go
# to pytest, e.g. -x, -k alternate.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GANTT_NOVA_E2E_TESTS=gantt/tests/nova_minicloud exec "$ROOT/tools/nova_e2e.sh" "$@"
