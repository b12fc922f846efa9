#!/usr/bin/env bash
# Run the whole test suite: unit tests (SQLite, in-process) and functional
# tests (the real gantt-scheduler on this machine's RabbitMQ, MariaDB and
# PostgreSQL). Extra arguments go to pytest, e.g. gantt/tests/unit -x.
set -euo pipefail
. "$(dirname "$0")/bootstrap.sh"
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider "$@"
