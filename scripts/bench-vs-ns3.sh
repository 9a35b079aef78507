#!/usr/bin/env bash
# Times cclab against ns-3 on the same dumbbell work, side by side on this machine.
#
#   bash scripts/bench-vs-ns3.sh [--quick] [--runs N] [--cc cubic|reno]
#
# Installs Debian's ns-3 (libns3-dev) if it is missing (needs root), builds cclab
# (release, plain and profile-guided) and our own ns-3 dumbbell program
# (bench/ns3/dumbbell.cc), then runs each case in N rounds (default 3; --quick: short
# cases, 1 round), each one ns-3 run followed by CCLAB_REPEATS runs of each cclab build.
# For each case it prints the median process wall time of each, the ratios, bottleneck
# packets per wall-second of each, and whether both moved the same work (bottleneck
# packets and utilisation within a few percent).
#
# What is timed: the whole process, with bash's `time` (millisecond resolution).
# - ns-3: `dumbbell` builds the topology, simulates, prints three lines and tears down.
# - cclab: `cclab run bench/ns3/dumbbell.toml --set ...` parses the scenario, simulates
#   with its default 10 ms time-series sampling, writes the whole results folder a user
#   gets (summary.json, perf.json, flows.csv, queue.csv, four SVG plots, report.html) to
#   disk under the build folder, and prints its table. Two cclab binaries are timed: the
#   plain release build (`cargo build --release`) and the profile-guided one
#   (scripts/build-pgo.sh), whose results folders must be identical to the plain
#   build's (the script stops if they are not).
# Building either program is not timed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
. scripts/bench-common.sh

RUNS=3
# cclab runs per round, per build: a cclab run lasts tens of milliseconds, so one
# scheduling hiccup of the shared host moves a single run by more than the difference
# being measured; ns-3's runs last seconds and average such noise out themselves.
CCLAB_REPEATS=5
QUICK=0
CC=cubic
# Allowed difference in bottleneck packets (percent) and utilisation (absolute, percent
# points) for "the same work".
TOLERANCE_PCT=3

usage() {
    echo "usage: bash scripts/bench-vs-ns3.sh [--quick] [--runs N] [--cc cubic|reno]" >&2
    exit 2
}

bad_arg() {
    echo "error: $*" >&2
    exit 2
}

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --quick) QUICK=1; RUNS=1 ;;
            --runs)
                [ $# -ge 2 ] || usage
                [[ "$2" =~ ^[1-9][0-9]?$ ]] || bad_arg "--runs $2: allowed 1 to 99"
                RUNS=$2; shift ;;
            --cc)
                [ $# -ge 2 ] || usage
                case "$2" in
                    cubic|reno) CC=$2 ;;
                    *) bad_arg "--cc $2: allowed cubic (ns-3 TcpCubic), reno (TcpLinuxReno)" ;;
                esac
                shift ;;
            *) echo "error: unknown argument $1" >&2 && usage ;;
        esac
        shift
    done
}

# The cases, one a line: name, flows, bottleneck Mbit/s, RTT ms, simulated seconds.
cases() {
    if [ "$QUICK" = 1 ]; then
        echo "a-10s $CASE_A 10"
        echo "b-3s $CASE_B 3"
    else
        echo "a-10s $CASE_A 10"
        echo "a-60s $CASE_A 60"
        echo "b-30s $CASE_B 30"
    fi
}

OUT="${CARGO_TARGET_DIR:-target}/bench-vs-ns3"
NS3="$OUT/dumbbell"
NS3_LIBS="-lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications"
NS3_LIBS="$NS3_LIBS -lns3-traffic-control"

build() {
    if ! dpkg-query -W -f='${Status}' libns3-dev 2>/dev/null | grep -q "install ok installed"; then
        if [ "$(id -u)" != 0 ]; then
            echo "error: libns3-dev is not installed; run as root or apt-get install it" >&2
            exit 1
        fi
        install_packages "libns3-dev"
    fi
    build_cclab
    mkdir -p "$OUT"
    if [ ! -x "$NS3" ] || [ bench/ns3/dumbbell.cc -nt "$NS3" ]; then
        echo "building $NS3 (g++ -O2 against Debian's ns-3)" >&2
        # shellcheck disable=SC2086 # NS3_LIBS is a list of flags
        g++ -O2 -std=c++17 bench/ns3/dumbbell.cc -o "$NS3" $NS3_LIBS
    fi
}

run_ns3() { # log flows mbps rtt_ms secs queue
    timed "$1" "$NS3" --cc="$CC" --flows="$2" --rate="$3Mbps" --rtt="$4ms" \
        --bottleneckDelay="${BOTTLENECK_DELAY_MS}ms" --queue="$6" --duration="$5s"
}

# Reads "key value" from the ns-3 program's output, or "key": value from summary.json.
ns3_value() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
json_value() { sed -n "s/^ *\"$2\": \([0-9.]*\),\{0,1\}$/\1/p" "$1" | head -1; }

# Runs one case RUNS times, alternating the simulators, and prints one record for
# scripts/bench-vs-ns3-table.awk: the case, then for ns-3, cclab and cclab's PGO build
# the median wall and CPU seconds, then the bottleneck packets and utilisation of ns-3
# and of cclab.
bench_case() {
    local name=$1 flows=$2 mbps=$3 rtt=$4 secs=$5 queue i r
    queue=$(bdp_packets "$mbps" "$rtt")
    local ns3_w=() ns3_c=() cc_w=() cc_c=() pgo_w=() pgo_c=() log="$OUT/$name" t
    local work=("$flows" "$mbps" "$rtt" "$secs" "$queue")
    for ((i = 1; i <= RUNS; i++)); do
        t=$(run_ns3 "$log.ns3.txt" "${work[@]}")
        ns3_w+=("${t% *}") && ns3_c+=("${t#* }")
        for ((r = 1; r <= CCLAB_REPEATS; r++)); do
            t=$(run_cclab "$CCLAB" "$log.cclab.txt" "$OUT/results-$name" "$CC" "${work[@]}")
            cc_w+=("${t% *}") && cc_c+=("${t#* }")
            t=$(run_cclab "$CCLAB_PGO" "$log.cclab-pgo.txt" "$OUT/results-$name-pgo" "$CC" \
                "${work[@]}")
            pgo_w+=("${t% *}") && pgo_c+=("${t#* }")
        done
        echo "$name round $i/$RUNS: ns-3 ${ns3_w[-1]} s, cclab" \
            "$(median "${cc_w[@]: -CCLAB_REPEATS}") s, cclab PGO" \
            "$(median "${pgo_w[@]: -CCLAB_REPEATS}") s (medians of $CCLAB_REPEATS;" \
            "load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    same_results "$OUT/results-$name" "$OUT/results-$name-pgo"
    local summary="$OUT/results-$name/summary.json"
    echo "$name $flows $CC $mbps $rtt $queue $secs" \
        "$(median "${ns3_w[@]}") $(median "${ns3_c[@]}")" \
        "$(median "${cc_w[@]}") $(median "${cc_c[@]}")" \
        "$(median "${pgo_w[@]}") $(median "${pgo_c[@]}")" \
        "$(ns3_value "$log.ns3.txt" bottleneck_packets) $(ns3_value "$log.ns3.txt" utilization)" \
        "$(json_value "$summary" delivered_packets) $(json_value "$summary" utilization)"
}

# The plain and PGO builds' results folders hold the same bytes (perf.json, which times
# the run, aside), or the script stops: the two must simulate the same thing.
same_results() {
    if ! diff -r -q -x perf.json "$1" "$2" >&2; then
        echo "error: the PGO build's results differ from the plain build's ($1, $2)" >&2
        exit 1
    fi
}

main() {
    parse_args "$@"
    build
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(machine)"
    echo "ns-3: Debian libns3-dev $(dpkg-query -W -f='${Version}' libns3-dev)"
    echo "cclab: commit $(git describe --always --dirty 2>/dev/null || echo unknown)"
    echo "rounds per case: $RUNS, each one ns-3 run, then $CCLAB_REPEATS runs of each cclab build"
    echo "load before: $(uptime | sed 's/.*load average/load average/')"
    echo
    local records="$OUT/records.txt"
    : >"$records"
    while read -r name flows mbps rtt secs; do
        bench_case "$name" "$flows" "$mbps" "$rtt" "$secs" >>"$records"
    done < <(cases)
    echo "load after: $(uptime | sed 's/.*load average/load average/')"
    echo "the whole script took $((SECONDS / 60)) min $((SECONDS % 60)) s"
    echo
    awk -v tol="$TOLERANCE_PCT" -f scripts/bench-vs-ns3-table.awk "$records"
}

main "$@"
