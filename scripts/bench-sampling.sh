#!/usr/bin/env bash
# What the time series costs: the 100-flow run of scripts/bench-vs-ns3.sh's case (b),
# sampled every 10 ms against once per run, side by side on this machine.
#
#   bash scripts/bench-sampling.sh [--quick] [--pairs N]
#
# Builds cclab (release, plain and profile-guided), then times `cclab run` of the
# dumbbell (100 CUBIC flows, 1 Gbit/s, RTT 20 ms, one BDP of DropTail, 30 s; --quick:
# 3 s) with `--series none`, in N alternating pairs (default 21; --quick: 5) for each
# build: the scenario's own 10 ms sampling, then `sample_interval` set to the whole run
# (a sample at the start and one at the end). Both write the summary, the plots and
# report.html; `--series none` leaves out the time-series files, whose cost is their
# size, not sampling's. It prints the median wall and CPU seconds of each, and the
# median over pairs of each pair's ratio: what sampling at 10 ms costs, against the
# target of under 5% (issue 14).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
. scripts/bench-common.sh

PAIRS=21
SECS=30

usage() {
    echo "usage: bash scripts/bench-sampling.sh [--quick] [--pairs N]" >&2
    exit 2
}

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --quick) SECS=3; PAIRS=5 ;;
            --pairs)
                [ $# -ge 2 ] || usage
                [[ "$2" =~ ^[1-9][0-9]?$ ]] || { echo "error: --pairs $2: allowed 1 to 99" >&2; exit 2; }
                PAIRS=$2; shift ;;
            *) echo "error: unknown argument $1" >&2 && usage ;;
        esac
        shift
    done
}

OUT="${CARGO_TARGET_DIR:-target}/bench-sampling"

# The median of the ratios a[i] / b[i] of two equally long lists given as "a1 a2 ... --
# b1 b2 ...".
median_ratio() {
    local a=() ratios=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    for x in "${a[@]}"; do
        ratios+=("$(awk -v x="$x" -v y="$1" 'BEGIN { printf "%.4f\n", (y > 0 ? x / y : 0) }')")
        shift
    done
    median "${ratios[@]}"
}

# Times one build: prints "build wall_10ms cpu_10ms wall_once cpu_once ratio_wall
# ratio_cpu" (medians).
bench_build() {
    local label=$1 cclab=$2 i t
    local w10=() c10=() w1=() c1=() flows mbps rtt
    read -r flows mbps rtt <<<"$CASE_B"
    local work=(cubic "$flows" "$mbps" "$rtt" "$SECS" "$(bdp_packets "$mbps" "$rtt")")
    for ((i = 1; i <= PAIRS; i++)); do
        t=$(run_cclab "$cclab" "$OUT/$label-10ms.txt" "$OUT/$label-10ms" "${work[@]}" \
            --series none)
        w10+=("${t% *}") && c10+=("${t#* }")
        t=$(run_cclab "$cclab" "$OUT/$label-once.txt" "$OUT/$label-once" "${work[@]}" \
            --series none --set "sample_interval=${SECS}s")
        w1+=("${t% *}") && c1+=("${t#* }")
    done
    echo "$label $(median "${w10[@]}") $(median "${c10[@]}") $(median "${w1[@]}")" \
        "$(median "${c1[@]}") $(median_ratio "${w10[@]}" -- "${w1[@]}")" \
        "$(median_ratio "${c10[@]}" -- "${c1[@]}")"
}

main() {
    parse_args "$@"
    build_cclab
    mkdir -p "$OUT"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(machine)"
    echo "cclab: commit $(git describe --always --dirty 2>/dev/null || echo unknown)"
    echo "case: (flows, Mbit/s, RTT ms) $CASE_B, CUBIC, 1 BDP DropTail, ${SECS} s, --series none"
    echo "pairs per build: $PAIRS (10 ms sampling, then one sample per run)"
    echo "load before: $(uptime | sed 's/.*load average/load average/')"
    echo
    local rows=()
    rows+=("$(bench_build plain "$CCLAB")")
    rows+=("$(bench_build pgo "$CCLAB_PGO")")
    echo "load after: $(uptime | sed 's/.*load average/load average/')"
    echo
    printf '%-6s %13s %13s %13s %13s %11s %11s\n' build "10 ms wall s" "10 ms cpu s" \
        "once wall s" "once cpu s" "cost wall" "cost cpu"
    for row in "${rows[@]}"; do
        # shellcheck disable=SC2086 # the row is seven words
        set -- $row
        printf '%-6s %13s %13s %13s %13s %10s%% %10s%%\n' "$1" "$2" "$3" "$4" "$5" \
            "$(awk -v r="$6" 'BEGIN { printf "%+.1f", (r - 1) * 100 }')" \
            "$(awk -v r="$7" 'BEGIN { printf "%+.1f", (r - 1) * 100 }')"
    done
    echo
    echo "cost: the median over pairs of (10 ms run) / (one-sample run) - 1; target under 5%"
}

main "$@"
