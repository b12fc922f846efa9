#!/usr/bin/env bash
# The differential test of Gantt's filters and weighers against the real
# Nova 34 ones, in-process (see doc/source/admin/nova-diff.rst). Needs only
# python3: creates or refreshes the virtualenv .venv-nova-diff at the repo
# root with Gantt and nova (pinned by gantt/tests/nova_diff/constraints.txt;
# they co-install), then runs the test. Extra arguments go to pytest, e.g.
# -x, -k w17.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_NOVA_DIFF_VENV:-$ROOT/.venv-nova-diff}
PYTHON=${PYTHON:-python3}
CONSTRAINTS=$ROOT/gantt/tests/nova_diff/constraints.txt
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.gantt-nova-diff-installed"
WANT=$(sha1sum "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" |
       sha1sum | cut -c1-40)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "==> installing Gantt and nova into $VENV" \
        "(a minute or two on a fresh machine)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$CONSTRAINTS" -e "$ROOT[test]" nova
    echo "$WANT" > "$STAMP"
fi
cd "$ROOT"
exec "$VENV/bin/python" -W ignore::DeprecationWarning -m pytest \
    -p no:cacheprovider gantt/tests/nova_diff "$@"
