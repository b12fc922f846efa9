# Sourced by .ci/run: stages that run in parallel lanes, each timed.
#
# A stage is one command with a name. A lane is a list of stages run one
# after another in the background; lanes run beside each other, so that
# stages that share nothing (the README's test suite, the oracle
# comparisons) overlap on the machine's two cores. Each stage writes to
# $CI_LOGS/NAME.log; when it ends, its log is printed whole (under a lock,
# so that two lanes never interleave) with its wall time and the load
# beside it, and a row goes to $CI_LOGS/stages.tsv. A lane goes on after
# a failed stage (so that one failure does not hide another); ci_report
# prints the table and fails when any stage failed or a lane died.
#
# Needs: CI_LOGS (a folder).

ci_stage() {
    local name=$1 start rc
    shift
    start=$(date +%s)
    set +e
    "$@" > "$CI_LOGS/$name.log" 2>&1 < /dev/null
    rc=$?
    set -e
    _ci_record "$name" "$rc" "$(( $(date +%s) - start ))"
    return 0
}

_ci_record() {
    local name=$1 rc=$2 seconds=$3 load
    load=$(cut -d' ' -f1 /proc/loadavg)
    {
        flock 8
        echo "==> stage $name: exit $rc after ${seconds}s (load $load)"
        cat "$CI_LOGS/$name.log"
        echo "<== stage $name: exit $rc after ${seconds}s (load $load)"
        printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$seconds" "$load" \
            >> "$CI_LOGS/stages.tsv"
    } 8> "$CI_LOGS/.print.lock"
}

# ci_lane NAME FUNCTION: run FUNCTION (a list of ci_stage calls) in the
# background; its exit status is checked by ci_wait.
CI_LANES=()
ci_lane() {
    "$2" &
    CI_LANES+=("$1:$!")
}

ci_wait() {
    local lane status=0
    for lane in "${CI_LANES[@]}"; do
        wait "${lane#*:}" || { echo "lane ${lane%%:*} died"; status=1; }
    done
    return $status
}

# ci_report START: the stage table, slowest first, and the verdict.
ci_report() {
    local start=$1 failed
    echo
    echo "stage                      exit   wall s  load"
    sort -t$'\t' -k3,3nr "$CI_LOGS/stages.tsv" |
        awk -F'\t' '{ printf "%-26s %4s %8s  %s\n", $1, $2, $3, $4 }'
    echo "all stages: $(( $(date +%s) - start ))s wall"
    _ci_counts
    failed=$(awk -F'\t' '$2 != 0 { print $1 }' "$CI_LOGS/stages.tsv")
    if [ -n "$failed" ]; then
        echo "FAILED stages:" $failed
        return 1
    fi
}

# The pytest summary lines of every stage, added up: one closing line
# "ci: N passed, M failed" for whoever reads only the end of the log.
_ci_counts() {
    cat "$CI_LOGS"/*.log |
        grep -E '^(=+ )?[0-9]+ (passed|failed)' |
        awk '{ for (i = 1; i < NF; i++) {
                   w = $(i + 1); sub(/,$/, "", w)
                   if (w == "passed") p += $i
                   if (w == "failed") f += $i } }
             END { printf "ci: %d passed, %d failed\n", p, f }'
}
