#!/usr/bin/env bash
# The simulator core against an earlier commit's, side by side on this machine.
#
#   bash scripts/bench-against.sh [REV] [--rounds N] [--cases LIST] [--quick]
#
# Issue 14 sets its packets-per-second targets "measured in the same run as the figures
# before your change": this script is that run. REV (default 0957973, main when the issue
# was filed) is exported with `git archive` into target/bench-against/<commit> and built
# there (`cargo build --release`, kept for the next run); this tree is built plain and with
# profile-guided optimisation (scripts/build-pgo.sh). Then `cclab bench --one CASE` of
# the three binaries runs in turn, REV, plain, PGO, for N rounds (default 21 for case a,
# 15 for b, 5 for c; --quick: 3 rounds of a and b). Each child times the simulation alone
# (wall and thread CPU), so building the scenario and starting the process are left out.
#
# Printed per case and build: the median wall and CPU seconds, bottleneck packets per
# wall-second at the median, and the speed-up against REV as the ratio of the medians
# and as the median of each round's ratio (a slower host for a few seconds moves both
# builds of that round alike). The packets moved are printed too: the model has changed
# since REV, so the work differs slightly (a fraction of a percent on a and b).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
. scripts/bench-common.sh

REV=0957973
ROUNDS=""
CASES="a b c"

usage() {
    echo "usage: bash scripts/bench-against.sh [REV] [--rounds N] [--cases a,b,c] [--quick]" >&2
    exit 2
}

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --quick) ROUNDS=3; CASES="a b" ;;
            --rounds)
                [ $# -ge 2 ] || usage
                [[ "$2" =~ ^[1-9][0-9]?$ ]] || { echo "error: --rounds $2: allowed 1 to 99" >&2; exit 2; }
                ROUNDS=$2; shift ;;
            --cases)
                [ $# -ge 2 ] || usage
                [[ "$2" =~ ^[abc](,[abc])*$ ]] ||
                    { echo "error: --cases $2: allowed a comma-separated list of a, b and c" >&2; exit 2; }
                CASES=${2//,/ }; shift ;;
            -*) echo "error: unknown argument $1" >&2 && usage ;;
            *) REV=$1 ;;
        esac
        shift
    done
}

# Rounds for a case: --rounds, or more for the short cases, whose times are noisier.
rounds_for() {
    if [ -n "$ROUNDS" ]; then echo "$ROUNDS"; return; fi
    case "$1" in a) echo 21 ;; b) echo 15 ;; c) echo 5 ;; esac
}

# Builds REV's cclab from `git archive` (no worktree is registered) and prints its path.
build_rev() {
    local commit dir
    commit=$(git rev-parse --verify --quiet "$REV^{commit}") ||
        { echo "error: REV $REV: not a commit of this repository" >&2; exit 2; }
    dir="${CARGO_TARGET_DIR:-target}/bench-against/${commit:0:12}"
    if [ ! -x "$dir/target/release/cclab" ]; then
        echo "building $REV (${commit:0:12}) in $dir" >&2
        rm -rf "$dir"
        mkdir -p "$dir"
        git archive "$commit" | tar -x -C "$dir"
        (cd "$dir" && CARGO_TARGET_DIR=target cargo build --release --quiet -p cclab)
    fi
    echo "$dir/target/release/cclab"
}

# Field $2 of every line of the file $1 (the `bench --one` lines of one build).
column() {
    awk -v f="$2" '{ print $f }' "$1"
}

# Prints one build's line for a case: the file of its runs and, for a build compared
# with REV, the file of REV's runs.
report() {
    local label=$1 runs=$2 rev_runs=${3:-} wall cpu packets ratios=()
    # bench --one: name simulated_s wall_s cpu_s packets events peak_kb utilisation [...]
    wall=$(median $(column "$runs" 3))
    cpu=$(median $(column "$runs" 4))
    packets=$(column "$runs" 5 | head -1)
    awk -v l="$label" -v w="$wall" -v c="$cpu" -v p="$packets" 'BEGIN {
        printf "  %-7s wall %.4f s  cpu %.4f s  %6.2f M packets/wall-s  %d packets", l, w, c, p / w / 1e6, p }'
    if [ -n "$rev_runs" ]; then
        mapfile -t ratios < <(paste -d' ' <(column "$rev_runs" 3) <(column "$runs" 3) |
            awk '{ printf "%.4f\n", $1 / $2 }')
        awk -v w="$wall" -v c="$cpu" -v rw="$(median $(column "$rev_runs" 3))" \
            -v rc="$(median $(column "$rev_runs" 4))" -v rr="$(median "${ratios[@]}")" 'BEGIN {
            printf "  x%.2f wall, x%.2f cpu, x%.2f per round", rw / w, rc / c, rr }'
    fi
    echo
}

main() {
    parse_args "$@"
    install_packages
    local rev_bin case n i
    rev_bin=$(build_rev)
    build_cclab
    SCRATCH=$(mktemp -d)
    trap 'rm -rf "$SCRATCH"' EXIT
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(git describe --always --dirty) against $REV;" \
        "$(machine)"
    for case in $CASES; do
        n=$(rounds_for "$case")
        for i in $(seq "$n"); do
            "$rev_bin" bench --one "$case" >>"$SCRATCH/$case.rev"
            "$CCLAB" bench --one "$case" >>"$SCRATCH/$case.plain"
            "$CCLAB_PGO" bench --one "$case" >>"$SCRATCH/$case.pgo"
        done
        echo "case $case, $n rounds (medians; speed-ups against $REV):"
        report "$REV" "$SCRATCH/$case.rev"
        report plain "$SCRATCH/$case.plain" "$SCRATCH/$case.rev"
        report PGO "$SCRATCH/$case.pgo" "$SCRATCH/$case.rev"
    done
}

main "$@"
