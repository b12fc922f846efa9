# Sourced by tools/*.sh: make sure .venv exists with Gantt and its test
# dependencies installed, on a machine that has only python3.
# Re-installs only when setup.cfg changed since the last install.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${GANTT_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.gantt-installed"
WANT=$(sha1sum "$ROOT/setup.cfg" "$ROOT/setup.py" "$ROOT/pyproject.toml" | sha1sum | cut -c1-40)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "==> installing Gantt and its dependencies into $VENV (a minute on a fresh machine)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$ROOT[test]"
    echo "$WANT" > "$STAMP"
fi
