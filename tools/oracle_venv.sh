# Sourced by the differential tests (tools/*_diff.sh): the virtualenvs of
# the real systems Gantt is compared with (Placement, Nova, Cinder,
# Neutron). Installing one takes minutes, so each lives in a cache outside
# the checkout, ${GANTT_ORACLE_CACHE:-~/.cache/gantt-oracles}/NAME-HASH,
# where HASH covers what decides its contents (Gantt's setup.cfg and
# pyproject.toml, the constraints file, the packages); every clone on this
# machine shares it, and $ROOT/.venv-NAME is a symbolic link to it, so
# the commands the docs show keep working. GANTT_ORACLE_CACHE=none keeps
# the virtualenv in the checkout instead. Needs $ROOT and $PYTHON.
#
# A virtualenv that holds Gantt holds it as an editable install of one
# checkout at a time: oracle_venv re-points it at $ROOT when another
# checkout used it last, under an exclusive lock on file descriptor 9 that
# the caller keeps (exec keeps it open) until its test run ends, so two
# checkouts' runs take turns instead of testing each other's code.
#
# GANTT_ORACLE_BUILD_ONLY=1 makes the calling script stop (exit 0) once
# its virtualenv is ready: tools/oracle_venvs.sh builds them all at once.

ORACLE_CACHE=${GANTT_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gantt-oracles}
# uv (a test dependency of Gantt's, so in $ROOT/.venv once tools/test.sh or
# tools/bootstrap.sh ran) installs a virtualenv in a fraction of pip's
# time and CPU; pip does it where uv is not there. Both resolve the same
# pins: each oracle's constraints file fixes its versions.
ORACLE_UV=${GANTT_ORACLE_UV:-$ROOT/.venv/bin/uv}

# oracle_venv LINK NAME WITH_GANTT KEYFILE... -- PIP_ARGS...
# Sets ORACLE_VENV to the virtualenv to run (LINK, or the cached one).
oracle_venv() {
    local link=$1 name=$2 with_gantt=$3 keys=() venv want
    shift 3
    while [ "$1" != "--" ]; do keys+=("$1"); shift; done
    shift
    want=$( (cd "$ROOT" && sha1sum "${keys[@]#"$ROOT"/}"
             echo "${*//"$ROOT"/ROOT}") | sha1sum | cut -c1-12)
    if [ "$ORACLE_CACHE" = none ]; then
        venv=$link
    else
        venv=$ORACLE_CACHE/$name-$want
        mkdir -p "$ORACLE_CACHE"
    fi
    exec 9>"$venv.lock"
    flock 9
    _oracle_build "$venv" "$want" "$name" "$@"
    [ "$venv" = "$link" ] || _oracle_link "$link" "$venv"
    [ "$with_gantt" = no ] || _oracle_point_at_root "$venv"
    [ "$with_gantt" = yes ] || flock -u 9
    ORACLE_VENV=$link
    [ -z "${GANTT_ORACLE_BUILD_ONLY:-}" ] || exit 0
}

_oracle_build() {
    local venv=$1 want=$2 name=$3 stamp
    shift 3
    stamp="$venv/.gantt-oracle-installed"
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
    echo "==> installing the $name oracle into $venv" \
        "(a minute or two, once per machine)"
    rm -rf "$venv"
    if [ -x "$ORACLE_UV" ]; then
        "$ORACLE_UV" -q venv --seed --python "$PYTHON" "$venv"
        "$ORACLE_UV" -q pip install --python "$venv/bin/python" "$@"
    else
        "$PYTHON" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet \
            --disable-pip-version-check --upgrade pip
        "$venv/bin/python" -m pip install --quiet \
            --disable-pip-version-check "$@"
    fi
    rm -f "$venv/.gantt-root"
    echo "$want" > "$stamp"
}

_oracle_link() {
    local link=$1 venv=$2
    if [ -d "$link" ] && [ ! -L "$link" ]; then
        rm -rf "$link"     # a virtualenv of the older in-checkout layout
    fi
    [ "$(readlink "$link" 2>/dev/null)" = "$venv" ] || ln -sfn "$venv" "$link"
}

_oracle_point_at_root() {
    local venv=$1
    [ "$(cat "$venv/.gantt-root" 2>/dev/null)" = "$ROOT" ] && return 0
    echo "==> pointing $venv at this checkout"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-deps -e "$ROOT"
    echo "$ROOT" > "$venv/.gantt-root"
}
