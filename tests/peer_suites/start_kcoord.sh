# Sourced by the peer-suite runners: start a kcoord for a suite and learn its listeners.
# Sourcing makes the scratch folder $work and an EXIT trap that stops kcoord and removes it.
#   start_kcoord LISTENERS [kcoord serve args...]
# starts `python -m coordinator serve --data-dir "$work/data" ARGS` in the background, waits
# up to 10 s for LISTENERS lines `kcoord listening on HOST:PORT[ (NAME)]` and exits 2 with
# kcoord's stderr if they do not come.
#   kcoord_address [NAME]
# prints the HOST:PORT of the listener NAME (without NAME: the first listener).
#   suite_not_run SUITE REASON
# prints a banner saying the suite was NOT RUN and why, and exits 3 (a suite that could not be
# obtained is neither a pass nor a failure of kcoord; callers such as .ci/run show it as such).
#   judge_suite JUNIT_XML SUITE
# prints the suite's counts (suite_result.py) and returns 0 only when every test passed.

work="$(mktemp -d)"

# kcoord writes its live snapshot as it stops: wait for it (10 s at most, then SIGKILL) before
# removing its data directory, or rm races the write.
stop_kcoord() {
    if [[ -n "${server_pid:-}" ]]; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop_kcoord EXIT

start_kcoord() {
    local listeners="$1"
    shift
    python -m coordinator serve --data-dir "$work/data" "$@" \
        >"$work/kcoord.out" 2>"$work/kcoord.err" &
    server_pid=$!
    for _ in $(seq 100); do
        [[ "$(grep -c "kcoord listening on" "$work/kcoord.out" 2>/dev/null)" -ge "$listeners" ]] \
            && return 0
        sleep 0.1
    done
    echo "kcoord did not start:"
    cat "$work/kcoord.err"
    exit 2
}

kcoord_address() {
    if [[ -n "${1:-}" ]]; then
        sed -n "s/^kcoord listening on \(.*\) ($1)\$/\1/p" "$work/kcoord.out" | head -1
    else
        sed -n 's/^kcoord listening on \([^ ]*\).*/\1/p' "$work/kcoord.out" | head -1
    fi
}

suite_not_run() {
    {
        echo "########################################################################"
        echo "## NOT RUN: $1"
        echo "## $2"
        echo "########################################################################"
    } >&2
    exit 3
}

judge_suite() {
    python "$(dirname "${BASH_SOURCE[0]}")/suite_result.py" "$1" "$2"
}
