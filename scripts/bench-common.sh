# shellcheck shell=bash
# Shared by scripts/bench-vs-ns3.sh, bench-sampling.sh and bench-against.sh (sourced, not run):
# the cclab builds they time, and how a run is timed and summed up.
#
# bench-vs-ns3.sh and bench-sampling.sh both time whole processes with bash's `time`
# (millisecond resolution) and take medians, and both run `cclab run
# bench/ns3/dumbbell.toml` with the case's numbers set on the command line, so a figure
# of one script can be set beside the other's; bench-against.sh times `cclab bench --one`.

# shellcheck disable=SC2034 # used by the scripts that source this file
CCLAB="${CARGO_TARGET_DIR:-target}/release/cclab"
# shellcheck disable=SC2034
CCLAB_PGO="${CARGO_TARGET_DIR:-target}/pgo/release/cclab"
# The standard cases' dumbbells: flows, bottleneck Mbit/s, RTT ms (issue 14's (a) and
# (b); each script picks the simulated time).
# shellcheck disable=SC2034
CASE_A="1 100 50"
# shellcheck disable=SC2034
CASE_B="100 1000 20"
# Bottleneck one-way delay; the rest of each RTT is on the access path.
BOTTLENECK_DELAY_MS=5

# Builds the two cclab binaries that are timed: the plain release build and the
# profile-guided one (scripts/build-pgo.sh checks that its results equal the plain one's).
build_cclab() {
    ensure_cargo
    echo "building cclab (cargo build --release -p cclab)" >&2
    cargo build --release --quiet -p cclab
    echo "building cclab with profile-guided optimisation (scripts/build-pgo.sh)" >&2
    bash scripts/build-pgo.sh >/dev/null
}

# The machine and the processor the profile-guided build is compiled for (its
# `-Ctarget-cpu`, scripts/build-pgo.sh): "2 cores, AMD EPYC; PGO build for native (znver3)".
machine() {
    local model cpu=${CCLAB_PGO_CPU:-native}
    model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    if [ "$cpu" = native ]; then
        cpu+=$(rustc --print target-cpus | sed -n 's/.*(currently \(.*\))\.$/ (\1)/p' | head -1)
    fi
    echo "$(nproc) cores, $model; PGO build for $cpu"
}

# One BDP in 1500-byte packets, rounded up as cclab's "1bdp" is: Mbit/s x ms x 125 bytes.
bdp_packets() {
    echo $(( ($1 * $2 * 125 + 1499) / 1500 ))
}

# Runs a command with its output into the file $1 and prints its wall and CPU (user +
# system) seconds; on failure shows the output and stops.
timed() {
    local log=$1 TIMEFORMAT='%3R %3U %3S' times
    shift
    if ! times=$( { time "$@" </dev/null >"$log" 2>&1; } 2>&1 ); then
        echo "error: failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
    echo "$times" | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}

# The median of the numbers given (the mean of the middle two for an even count).
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Times `cclab run` of the dumbbell: binary log out_dir cc flows mbps rtt_ms secs
# queue_pkts [more cclab run arguments].
run_cclab() {
    local cclab=$1 log=$2 out=$3 cc=$4 flows=$5 mbps=$6 rtt=$7 secs=$8 queue=$9
    shift 9
    timed "$log" "$cclab" run bench/ns3/dumbbell.toml --out "$out" \
        --set "flows[0].cc=$cc" --set "flows[0].count=$flows" --set "bottleneck.rate=${mbps}Mbps" \
        --set "flows[0].rtt=${rtt}ms" --set "bottleneck.delay=${BOTTLENECK_DELAY_MS}ms" \
        --set "bottleneck.buffer=${queue}pkt" --set "duration=${secs}s" "$@"
}
