# Sourced by the differential tests (tools/nova_diff.sh, tools/cinder_diff.sh):
# oracle_venv VENV CONSTRAINTS PACKAGE creates the virtualenv VENV (with
# $PYTHON, python3 by default) or refreshes it when setup.cfg,
# pyproject.toml or CONSTRAINTS changed, installing Gantt (editable, with
# its test extras) and PACKAGE pinned by CONSTRAINTS. Needs $ROOT.
oracle_venv() {
    local venv=$1 constraints=$2 package=$3
    if [ ! -x "$venv/bin/python" ]; then
        echo "==> creating virtualenv $venv"
        "${PYTHON:-python3}" -m venv "$venv"
    fi
    local stamp="$venv/.gantt-$package-diff-installed" want
    want=$(sha1sum "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$constraints" |
           sha1sum | cut -c1-40)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        echo "==> installing Gantt and $package into $venv" \
            "(a minute or two on a fresh machine)"
        "$venv/bin/python" -m pip install --quiet \
            --disable-pip-version-check --upgrade pip
        "$venv/bin/python" -m pip install --quiet \
            --disable-pip-version-check -c "$constraints" -e "$ROOT[test]" \
            "$package"
        echo "$want" > "$stamp"
    fi
}
