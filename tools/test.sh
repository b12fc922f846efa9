#!/usr/bin/env bash
# Run the whole test suite: unit tests (SQLite, in-process) and functional
# tests (the real gantt-scheduler on this machine's RabbitMQ, MariaDB and
# PostgreSQL). Extra arguments go to pytest, e.g. gantt/tests/unit -x.
#
# The tests run in GANTT_TEST_PROCESSES pytest-xdist processes (3 unless
# set: on two cores the functional tests spend most of their time waiting
# on daemons, so a third process pays), each test file in one process
# (--dist loadfile: a file's tests share its module fixtures). Arguments
# that name -n or -p no:xdist themselves are left alone;
# GANTT_TEST_PROCESSES=0 runs everything in this one process.
set -euo pipefail
. "$(dirname "$0")/bootstrap.sh"
cd "$ROOT"
PARALLEL=(-n "${GANTT_TEST_PROCESSES:-3}" --dist loadfile)
for arg in "$@"; do
    case $arg in
        -n|-n[0-9]*|--numprocesses*|no:xdist) PARALLEL=() ;;
    esac
done
[ "${GANTT_TEST_PROCESSES:-3}" != 0 ] || PARALLEL=()
exec "$VENV/bin/python" -m pytest -p no:cacheprovider "${PARALLEL[@]}" "$@"
