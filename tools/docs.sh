#!/usr/bin/env bash
# Build the documentation and the release notes with warnings as errors,
# as `tox -e docs` and `tox -e releasenotes` do, in a venv of their own
# (.venv-docs) so that Sphinx never mixes with Gantt's runtime packages.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${GANTT_DOCS_VENV:-$ROOT/.venv-docs}
if [ ! -x "$VENV/bin/sphinx-build" ]; then
    echo "==> creating $VENV with Sphinx and reno"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$ROOT/doc/requirements.txt"
fi
cd "$ROOT"
"$VENV/bin/reno" -q lint
"$VENV/bin/sphinx-build" -W --keep-going -q -b html doc/source doc/build/html
"$VENV/bin/sphinx-build" -W --keep-going -q -b html releasenotes/source \
    releasenotes/build/html
echo "docs: doc/build/html and releasenotes/build/html built, no warnings"
