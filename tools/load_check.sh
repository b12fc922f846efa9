#!/usr/bin/env bash
# Run the functional tests of one module beside a CPU hog, as on a busy
# machine: the tests wait for state (gantt/tests/functional/waiting.py),
# so a load of 10 or more must not fail them.
#
#   tools/load_check.sh gantt/tests/functional/test_cli.py [pytest args]
#
# GANTT_LOAD_HOGS   busy-loop processes (default 12)
# GANTT_LOAD_MIN    the 1-minute load to reach before the tests (default 10)
# GANTT_LOAD_LIMIT  seconds the whole run may take (default 5400)
# The hog is killed on exit, whatever the outcome.
set -euo pipefail
MODULE=${1:?usage: $0 gantt/tests/functional/test_X.py [pytest args]}
shift
HOGS=${GANTT_LOAD_HOGS:-12}
MIN=${GANTT_LOAD_MIN:-10}
LIMIT=${GANTT_LOAD_LIMIT:-5400}
HERE=$(dirname "$0")
hogs=()
tests=

stop() {
    # the tests first, by SIGINT: pytest tears down (stops its daemons)
    if [ -n "$tests" ]; then
        kill -INT "$tests" 2>/dev/null || true
        wait "$tests" 2>/dev/null || true
    fi
    for pid in "${hogs[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait "${hogs[@]}" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

load1() { cut -d' ' -f1 /proc/loadavg; }

for _ in $(seq "$HOGS"); do
    python3 -c 'while True: pass' &
    hogs+=($!)
done
# the load average follows within minutes; bounded, so a machine that
# cannot reach it still runs the tests (and says so)
for _ in $(seq 300); do
    awk -v l="$(load1)" -v m="$MIN" 'BEGIN { exit !(l >= m) }' && break
    sleep 1
done
echo "==> load before: $(uptime)"
rc=0
timeout --signal=INT --kill-after=120 "$LIMIT" \
    "$HERE/test.sh" "$MODULE" -q -x "$@" &
tests=$!
wait "$tests" || rc=$?
tests=
echo "==> load after: $(uptime)"
exit "$rc"
