#!/usr/bin/env bash
# Run gantt-scheduler with a simulated fleet (see gantt/cmd/demo.py).
# Extra arguments go to gantt-demo, e.g. --hosts 2000 --instances 10000.
set -euo pipefail
. "$(dirname "$0")/bootstrap.sh"
exec "$VENV/bin/gantt-demo" "$@"
