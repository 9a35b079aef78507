# shellcheck shell=bash
# shellcheck disable=SC2034 # OUT and PASS are set for the scripts that source this file
# Tracing the kernel's TCP during one testbed run, for the scripts that read what the kernel
# did (kernel-acks.sh, host-times.sh). Sourced; each function exits with a message on error.
#
#   scenario_options NAME ARGS...     after SCENARIO: sets OUT (--out DIR, default
#                                     results/NAME-<scenario>) and PASS (every other
#                                     option, for cclab testbed run); calls the script's
#                                     `usage` on a bad or help option
#   need_root_and_python              both, or exit 2
#   cclab_binary                      sets CCLAB: $CCLAB_BIN if set (the test suite's), else
#                                     a release build of this checkout
#   hold_root_lock                    waits for /tmp/cclab-root.lock and holds it until the
#                                     script exits, so that no other root run (a test's
#                                     testbed, another trace) shares the machine or tracefs
#                                     while this one traces; run the testbed without flock
#   trace_start GROUP/EVENT=FILTER... mounts tracefs if it is not mounted, checks that each
#                                     event exists, sets its filter ('' for none), enables
#                                     it and starts tracing; an EXIT trap puts everything
#                                     back (events off, filters cleared, buffer size and
#                                     tracing_on as found, tracefs unmounted if mounted
#                                     here), also on failure
#   trace_stop FILE                   stops tracing, writes the trace to FILE, and warns
#                                     if the buffer overran

TRACEFS=/sys/kernel/tracing
TRACE_EVENTS=()
TRACE_MOUNTED=0
TRACE_OLD_BUFFER=""
TRACE_OLD_ON=""

scenario_options() {
    local name=$1
    shift
    [ -f "$SCENARIO" ] || { echo "error: SCENARIO: no such file: $SCENARIO" >&2; exit 2; }
    OUT="results/$name-$(basename "$SCENARIO" .toml)"
    PASS=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --out)
                [ $# -ge 2 ] || usage
                OUT=$2
                shift 2
                ;;
            -h|--help)
                usage
                ;;
            *)
                PASS+=("$1")
                shift
                ;;
        esac
    done
}

need_root_and_python() {
    [ "$(id -u)" = 0 ] || { echo "error: needs root (tracefs and the testbed's namespaces)" >&2; exit 2; }
    command -v python3 >/dev/null || { echo "error: needs python3" >&2; exit 2; }
}

cclab_binary() {
    CCLAB=${CCLAB_BIN:-}
    if [ -z "$CCLAB" ]; then
        . scripts/deps.sh
        ensure_cargo
        cargo build --release -q
        CCLAB="$(realpath "${CARGO_TARGET_DIR:-target}")/release/cclab"
    fi
}

hold_root_lock() {
    exec 9>/tmp/cclab-root.lock
    flock 9
}

trace_restore() {
    local e
    for e in "${TRACE_EVENTS[@]}"; do
        echo 0 > "$TRACEFS/events/$e/enable" || true
        echo 0 > "$TRACEFS/events/$e/filter" || true
    done
    [ -z "$TRACE_OLD_BUFFER" ] || echo "$TRACE_OLD_BUFFER" > "$TRACEFS/buffer_size_kb" || true
    [ -z "$TRACE_OLD_ON" ] || echo "$TRACE_OLD_ON" > "$TRACEFS/tracing_on" || true
    if [ "$TRACE_MOUNTED" = 1 ]; then
        umount "$TRACEFS" || true
    fi
}

trace_start() {
    local spec e
    if [ ! -e "$TRACEFS/events" ]; then
        mount -t tracefs nodev "$TRACEFS"
        TRACE_MOUNTED=1
    fi
    trap trace_restore EXIT
    for spec in "$@"; do
        e=${spec%%=*}
        [ -d "$TRACEFS/events/$e" ] || { echo "error: this kernel has no ${e/\//:} trace event" >&2; exit 1; }
    done
    TRACE_OLD_BUFFER=$(cat "$TRACEFS/buffer_size_kb")
    TRACE_OLD_ON=$(cat "$TRACEFS/tracing_on")
    echo 0 > "$TRACEFS/tracing_on"
    echo > "$TRACEFS/trace"
    # About 100 bytes an event; a 30 s run of two flows at 20 Mbit/s makes up to 100,000.
    echo 65536 > "$TRACEFS/buffer_size_kb"
    for spec in "$@"; do
        e=${spec%%=*}
        TRACE_EVENTS+=("$e")
        if [ -n "${spec#*=}" ]; then
            echo "${spec#*=}" > "$TRACEFS/events/$e/filter"
        fi
        echo 1 > "$TRACEFS/events/$e/enable"
    done
    echo 1 > "$TRACEFS/tracing_on"
}

trace_stop() {
    echo 0 > "$TRACEFS/tracing_on"
    cat "$TRACEFS/trace" > "$1"
    if grep -q '^overrun: [1-9]' "$TRACEFS"/per_cpu/cpu*/stats; then
        echo "warning: the trace buffer overran; some events are missing" >&2
    fi
}
