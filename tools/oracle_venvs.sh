#!/usr/bin/env bash
# Make (or check) every oracle virtualenv at once: the real Placement,
# Nova, Cinder and Neutron that the differential and conformance tests
# compare Gantt with (see tools/oracle_venv.sh). Installing them is mostly
# waiting on the package index, so they are built side by side; each
# prints its own "==> installing" line and, on failure, its log. Names of
# tools (placement_diff, nova_diff, ...) build only theirs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/gantt-oracle-venvs.XXXXXX")
trap 'rm -rf "$LOGS"' EXIT
export GANTT_ORACLE_BUILD_ONLY=1
pids=()
TOOLS=("$@")
[ ${#TOOLS[@]} -gt 0 ] || TOOLS=(placement_diff placement_gabbits nova_diff
                               nova_functional cinder_diff neutron_diff)
for tool in "${TOOLS[@]}"; do
    "$ROOT/tools/$tool.sh" > "$LOGS/$tool.log" 2>&1 &
    pids+=("$tool:$!")
done
status=0
for entry in "${pids[@]}"; do
    tool=${entry%%:*}
    if wait "${entry#*:}"; then
        grep -h '^==>' "$LOGS/$tool.log" || echo "==> $tool: ready"
    else
        echo "==> $tool: its virtualenv could not be made:"
        cat "$LOGS/$tool.log"
        status=1
    fi
done
exit $status
