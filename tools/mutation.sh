#!/usr/bin/env bash
# Mutation-test the scheduler's filters, weighers, candidates step and claim
# with mutmut, in its own venv (.venv-mutation). Arguments: dotted module or
# package names (default: all of them), or --report-only. Slow: see
# doc/source/contributor/mutation.rst.
set -euo pipefail
GANTT_VENV=${GANTT_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv-mutation}
. "$(dirname "$0")/bootstrap.sh"
cd "$ROOT"
if [ ! -x "$VENV/bin/mutmut" ]; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        'mutmut>=3.8,<3.9'
fi
exec "$VENV/bin/python" tools/mutation.py "$@"
