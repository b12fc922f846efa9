#!/usr/bin/env bash
# Packaging check: what a first real user gets from "pip install gantt-*.whl".
#
# Builds a wheel of this tree, installs it (not editable) into a fresh
# virtualenv in a temporary directory, and, from a working directory
# outside the source tree (so the checkout cannot be imported by
# accident), runs gantt-simulate on the packaged example fleet, then the
# installed commands against a fresh SQLite database and a fresh MariaDB
# database: gantt-manage db sync, gantt-status upgrade check,
# gantt-scheduler (on RabbitMQ, a topic of its own), one `gantt` call
# answered by it, and SIGTERM with a clean exit; then the Placement API:
# gantt-api (the development server) on a free loopback port answering
# GET /, and the WSGI application of the installed gantt-api-wsgi script
# (what mod_wsgi loads) answering GET / when called as a server calls it.
# Every step must succeed; the first that does not fails the check with
# its name.
#
# Environment: GANTT_TEST_TRANSPORT_URL (default the local RabbitMQ),
# GANTT_TEST_MYSQL_URL (default the local MariaDB; "none" skips it),
# PYTHON (default python3). pip's cache makes a second run quick.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
RABBIT=${GANTT_TEST_TRANSPORT_URL:-rabbit://guest:guest@127.0.0.1:5672/}
MYSQL=${GANTT_TEST_MYSQL_URL:-mysql+pymysql://root@127.0.0.1:3306/}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gantt-wheel-check.XXXXXX")
TOPIC=gantt-wheel-check-$(basename "$WORK" | cut -d. -f2)
STEP="start"
DAEMON=""
DAEMON_STARTED=""
API=""
MYSQL_DB=""

step() { STEP=$1; echo "==> wheel check: $1"; }
fail() { echo "wheel check: $*" >&2; exit 1; }

cleanup() {
    local code=$?
    if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
        kill -KILL -- "-$DAEMON"     # its process group: master and workers
    fi
    if [ -n "$API" ] && kill -0 "$API" 2>/dev/null; then
        kill -KILL "$API"
    fi
    if [ -n "$MYSQL_DB" ]; then
        "$VENV/bin/python" "$WORK/db.py" drop "$MYSQL" "$MYSQL_DB" || true
    fi
    if [ -n "$DAEMON_STARTED" ]; then
        "$VENV/bin/python" - "$RABBIT" "$TOPIC" <<'EOF' || true
"""delete the queues of this check's topic (the broker keeps them)"""
import socket, sys
import kombu
url, topic = sys.argv[1:]
with kombu.Connection(url.replace("rabbit://", "amqp://", 1)) as conn:
    channel = conn.channel()
    for base in (topic, topic + "-stats"):
        for name in (base, base + "." + socket.gethostname()):
            channel.queue_delete(name)
EOF
    fi
    [ $code -ne 0 ] && [ -f "$WORK/scheduler.log" ] && \
        tail -n 30 "$WORK/scheduler.log" >&2
    [ $code -ne 0 ] && [ -f "$WORK/api.log" ] && \
        tail -n 30 "$WORK/api.log" >&2
    [ $code -ne 0 ] && echo "wheel check FAILED at '$STEP'" >&2
    rm -rf "$WORK"
}
trap cleanup EXIT

step "copy the source tree"
# A build in place reuses build/ and gantt.egg-info/ of earlier builds,
# which can hold files the tree no longer ships: build from a clean copy.
# From git that is a clone of HEAD (pbr reads the version from it).
SRC=$WORK/src
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git clone --quiet --no-hardlinks "$ROOT" "$SRC"
    git -C "$SRC" checkout --quiet "$(git -C "$ROOT" rev-parse HEAD)"
    if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]; then
        echo "    (uncommitted changes are not in the wheel: it is HEAD's)"
    fi
    git -C "$SRC" ls-files gantt | sort > "$WORK/want"
else
    mkdir "$SRC"
    tar -C "$ROOT" --exclude=./build --exclude='./*.egg-info' \
        --exclude='./.venv*' --exclude=__pycache__ --exclude='*.pyc' \
        -cf - . | tar -C "$SRC" -xf -
    (cd "$SRC" && find gantt -type f | sort) > "$WORK/want"
fi

step "build the wheel"
# pip's output goes to a log, shown when it fails
pip_quietly() {
    "$@" --quiet --disable-pip-version-check > "$WORK/pip.log" 2>&1 ||
        fail "$(cat "$WORK/pip.log")"
}
# with the new virtualenv's pip: python3 alone may have none
VENV=$WORK/venv
"$PYTHON" -m venv "$VENV"
pip_quietly "$VENV/bin/python" -m pip wheel --no-deps -w "$WORK/dist" "$SRC"
WHEEL=$(ls "$WORK"/dist/gantt-*.whl)
BUILT=$(basename "$WHEEL" | cut -d- -f2)

step "check the wheel holds every file of the gantt package"
# a directory without __init__.py, or data left out of package_data,
# shows up here first
"$VENV/bin/python" -c 'import sys, zipfile
for name in zipfile.ZipFile(sys.argv[1]).namelist():
    print(name)' "$WHEEL" | grep '^gantt/' | sort > "$WORK/have"
MISSING=$(comm -23 "$WORK/want" "$WORK/have")
[ -z "$MISSING" ] || fail "not in $(basename "$WHEEL"):
$MISSING"

step "install the wheel into the fresh virtualenv"
pip_quietly "$VENV/bin/python" -m pip install "$WHEEL"
cd "$WORK"           # never the source tree from here on
WHERE=$("$VENV/bin/python" -c 'import gantt; print(gantt.__file__)')
case $WHERE in
    "$VENV"/*) ;;
    *) fail "gantt imported from $WHERE, not from the installed wheel" ;;
esac

step "--version of every command is the wheel's version and commit"
BUILD=$BUILT
if [ -d "$SRC/.git" ]; then
    SHA=$(git -C "$SRC" rev-parse --short=7 HEAD)
    BUILD="$BUILT (git $SHA)"
fi
for cmd in gantt-scheduler gantt-manage gantt-status gantt gantt-demo \
        gantt-api; do
    got=$("$VENV/bin/$cmd" --version 2>&1) || fail "$cmd --version: $got"
    # "<build>" (oslo.config) or "<command> <build>" (cliff)
    [ "$got" = "$BUILD" ] || [ "$got" = "$cmd $BUILD" ] ||
        fail "$cmd --version says '$got', not '$BUILD'"
done
if [ -d "$SRC/.git" ]; then
    "$VENV/bin/python" -c 'import json, sys
from importlib import metadata
sha = json.loads(metadata.distribution("gantt").read_text("pbr.json"))
sys.exit(sha["git_version"] != sys.argv[1])' "$SHA" || \
        fail "the wheel's pbr.json does not name commit $SHA"
fi

step "gantt-simulate replays a workload on the wheel's example fleet"
"$VENV/bin/gantt-simulate" --example-fleet > "$WORK/fleet.yaml" ||
    fail "gantt-simulate --example-fleet failed"
out=$("$VENV/bin/gantt-simulate" --fleet "$WORK/fleet.yaml" --quiet \
      --arrivals 300 --mode memory --policy balanced+stack 2>&1) ||
    fail "gantt-simulate: $out"
case $out in
    *"balanced+stack"*"VCPU used"*) ;;
    *) fail "gantt-simulate printed no table: $out" ;;
esac

cat > "$WORK/db.py" <<'EOF'
"""create/drop a uniquely named database on a server, for this check"""
import sys
import sqlalchemy as sa
action, admin_url, name = sys.argv[1:]
engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
with engine.connect() as conn:
    if action == "create":
        conn.exec_driver_sql("CREATE DATABASE %s CHARACTER SET utf8mb4" % name)
    else:
        conn.exec_driver_sql("DROP DATABASE IF EXISTS %s" % name)
EOF

# the newest revision of the source tree's scripts, read by alembic
HEAD_REV=$("$VENV/bin/python" -c 'import sys
from alembic import script
print(script.ScriptDirectory(sys.argv[1]).get_current_head())' \
    "$SRC/gantt/db/migrations")

sync_and_check() {   # $1: a label, $2: a database URL
    local conf=$WORK/$1.conf out
    printf '[DEFAULT]\ntransport_url = %s\n[database]\nconnection = %s\n' \
        "$RABBIT" "$2" > "$conf"
    printf '[scheduler]\ntopic = %s\nworkers = 1\n' "$TOPIC" >> "$conf"
    step "gantt-manage db sync on $1"
    out=$("$VENV/bin/gantt-manage" --config-file "$conf" db sync 2>&1) ||
        fail "$out"
    [ "$out" = "Database schema: empty -> $HEAD_REV" ] ||
        fail "expected 'empty -> $HEAD_REV', got: $out"
    step "gantt-status upgrade check on $1"
    out=$("$VENV/bin/gantt-status" --config-file "$conf" upgrade check 2>&1) ||
        fail "exit code $?: $out"
}

sync_and_check sqlite "sqlite:///$WORK/gantt.sqlite"
if [ "$MYSQL" != none ]; then
    MYSQL_DB=gantt_wheel_$(basename "$WORK" | cut -d. -f2 | tr -cd 'a-zA-Z0-9')
    "$VENV/bin/python" "$WORK/db.py" create "$MYSQL" "$MYSQL_DB" ||
        fail "cannot create a database on $MYSQL"
    sync_and_check mariadb "${MYSQL%/}/$MYSQL_DB?charset=utf8mb4"
fi

step "start gantt-scheduler"
CONF=$WORK/sqlite.conf
# in a process group of its own, so that a failed check kills its workers
setsid "$VENV/bin/gantt-scheduler" --config-file "$CONF" \
    > "$WORK/scheduler.log" 2>&1 &
DAEMON=$!
DAEMON_STARTED=yes
"$VENV/bin/python" - "$CONF" "$DAEMON" <<'EOF' || fail "not ready in 60 s"
"""wait until the daemon answers (a short timeout per try)"""
import os, sys, time
from gantt.cmd import common
from gantt.rpcapi import client
conf = common.parse_args(["--config-file", sys.argv[1]], log=False)
quick = client.SchedulerClient.from_conf(conf, timeout=2)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        os.kill(int(sys.argv[2]), 0)
    except OSError:
        sys.exit("gantt-scheduler exited")
    try:
        quick.get_statistics(None)
        sys.exit(0)
    except Exception:
        time.sleep(0.3)
sys.exit(1)
EOF

step "gantt stats, answered by the daemon"
out=$("$VENV/bin/gantt" --config-file "$CONF" stats 2>&1) || fail "$out"
[ -n "$out" ] || fail "gantt stats printed nothing"

step "SIGTERM stops gantt-scheduler cleanly"
kill -TERM "$DAEMON"
for _ in $(seq 1 300); do
    kill -0 "$DAEMON" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$DAEMON" 2>/dev/null && fail "still running 30 s after SIGTERM"
code=0
wait "$DAEMON" || code=$?
DAEMON=""
[ $code -eq 0 ] || fail "exit code $code"
if grep -q Traceback "$WORK/scheduler.log"; then
    fail "tracebacks in its log"
fi

step "the wheel installs gantt-api and gantt-api-wsgi"
for cmd in gantt-api gantt-api-wsgi; do
    [ -x "$VENV/bin/$cmd" ] || fail "no $cmd in $VENV/bin"
done

cat > "$WORK/root.py" <<'EOF'
"""check a GET / answer: Placement's version document, 200"""
import json, sys
status, body = sys.argv[1], sys.argv[2]
versions = json.loads(body)["versions"]
ok = status.startswith("200") and versions[0]["max_version"] == "1.39"
sys.exit(0 if ok else "GET / answered %s: %s" % (status, body[:300]))
EOF

step "gantt-api answers GET / on a free loopback port"
PORT=$("$VENV/bin/python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
API_CONF=$WORK/api.conf
cp "$CONF" "$API_CONF"
printf '[api]\nhost = 127.0.0.1\nport = %s\nnotify_workers = false\n' \
    "$PORT" >> "$API_CONF"
"$VENV/bin/gantt-api" --config-file "$API_CONF" > "$WORK/api.log" 2>&1 &
API=$!
"$VENV/bin/python" - "$PORT" "$API" "$WORK/root.py" <<'EOF' ||
"""GET / until it answers (30 s), then check the answer"""
import os, subprocess, sys, time, urllib.request
port, pid, check = sys.argv[1:]
deadline = time.monotonic() + 30
while True:
    try:
        os.kill(int(pid), 0)
    except OSError:
        sys.exit("gantt-api exited")
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/" % port,
                                    timeout=2) as resp:
            status, body = "%d" % resp.status, resp.read().decode()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("no answer in 30 s")
        time.sleep(0.3)
sys.exit(subprocess.run([sys.executable, check, status, body]).returncode)
EOF
    fail "gantt-api on port $PORT did not answer GET /"
kill -TERM "$API"
wait "$API" || true
API=""

step "gantt-api-wsgi's application answers GET /"
mkdir "$WORK/etc"
cp "$API_CONF" "$WORK/etc/gantt.conf"
GANTT_CONFIG_DIR=$WORK/etc "$VENV/bin/python" - "$VENV/bin/gantt-api-wsgi" \
    "$WORK/root.py" <<'EOF' || fail "gantt-api-wsgi's application failed"
"""load the script as mod_wsgi does (not as __main__) and call its
application with a server's environ"""
import runpy, subprocess, sys, wsgiref.util
script, check = sys.argv[1:]
application = runpy.run_path(script, run_name="gantt_api_wsgi")["application"]
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/"}
wsgiref.util.setup_testing_defaults(environ)
answer = []
body = b"".join(application(
    environ, lambda status, headers, exc_info=None: answer.append(status)))
sys.exit(subprocess.run([sys.executable, check, answer[0],
                         body.decode()]).returncode)
EOF

step "done"
echo "wheel check passed: $(basename "$WHEEL") installed and served"
