#!/usr/bin/env bash
# Builds cclab with profile-guided optimisation (PGO): the fastest binary of this source.
#
#   bash scripts/build-pgo.sh [--skip-without-llvm] [--rebuild]
#
# Prints the binary's path last: target/pgo/release/cclab (under $CARGO_TARGET_DIR if set).
# A binary built before from the same sources, training inputs, compiler and flags (a
# fingerprint of them is kept beside it; a git checkout is needed to take it) is reused
# without building again; --rebuild builds it anew regardless.
# Three steps, about two release builds' time in all:
# 1. an instrumented build (rustc -Cprofile-generate) in target/pgo-instrumented;
# 2. that binary runs a training set: `cclab bench --quick` (cases a, b and c), the
#    ns-3 comparison's dumbbell with CUBIC for 1 and 100 flows (sampling and the whole
#    results folder written), and the small scenario files (every queue discipline,
#    random loss, a trace link, finite transfers, parameter changes), so that no common
#    path is left looking cold;
# 3. llvm-profdata merges the counts, and a second build uses them (-Cprofile-use).
# PGO changes where the compiler inlines and how it lays out branches, never what the
# program computes: its results are byte-identical to the plain build's, which this
# script checks on a few scenarios before it prints the path.
#
# Both builds are also compiled for this machine's processor (`-Ctarget-cpu=native`:
# on x86-64 the BMI2, LZCNT and AVX2 instructions where it has them), so the binary may
# not start on an older processor; copy the plain build to other machines, or set
# CCLAB_PGO_CPU (e.g. x86-64-v2) to build for that instead. The instructions change,
# not the arithmetic: Rust contracts no floating-point operations, so the results stay
# the plain build's, which the same check proves.
#
# llvm-profdata must match rustc's LLVM major version. It is taken from rustup's
# llvm-tools component if installed, else from Debian's llvm-N package (installed with
# apt-get when missing, which needs root). Where neither can be had, the script fails,
# or with --skip-without-llvm (the test suite's form) says so and exits 0. The plain
# `cargo build --release` binary is not touched; scripts/bench-vs-ns3.sh times both.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_packages
ensure_cargo

TARGET="${CARGO_TARGET_DIR:-target}"
CPU="${CCLAB_PGO_CPU:-native}"
GEN_DIR="$TARGET/pgo-instrumented"
USE_DIR="$TARGET/pgo"
PROFILE_DIR="$USE_DIR/profile"

fail() {
    echo "error: $*" >&2
    exit 1
}

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

SKIP_WITHOUT_LLVM=0

# No llvm-profdata for rustc's LLVM: fails, or with --skip-without-llvm says so and
# ends the script successfully.
no_profdata() {
    if [ "$SKIP_WITHOUT_LLVM" = 1 ]; then
        echo "SKIPPED: no profile-guided build: $*"
        exit 0
    fi
    fail "$*"
}

# Sets PROFDATA to the llvm-profdata for rustc's LLVM, installing Debian's if need be.
find_profdata() {
    local major sysroot tool
    major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
    [ -n "$major" ] || fail "cannot read rustc's LLVM version from 'rustc -vV'"
    sysroot=$(rustc --print sysroot)
    for tool in "$sysroot"/lib/rustlib/*/bin/llvm-profdata; do
        if [ -x "$tool" ]; then
            PROFDATA=$tool
            return
        fi
    done
    if ! command -v "llvm-profdata-$major" >/dev/null 2>&1 &&
        ! install_packages "llvm-$major" >&2; then
        no_profdata "rustc's LLVM is $major, and neither rustup's llvm-tools component nor" \
            "Debian's llvm-$major (llvm-profdata-$major) is installed or installable"
    fi
    PROFDATA=$(command -v "llvm-profdata-$major") ||
        no_profdata "llvm-profdata-$major not found after installing llvm-$major"
}

# The training set: what a user runs most, short enough to take under a minute
# instrumented.
train() {
    local cclab=$1 out="$SCRATCH/train" f
    "$cclab" bench --quick >/dev/null
    "$cclab" run bench/ns3/dumbbell.toml --out "$out/a" --set "flows[0].rtt=50ms" \
        --set "duration=20s" >/dev/null
    "$cclab" run bench/ns3/dumbbell.toml --out "$out/b" --set "flows[0].count=100" \
        --set "bottleneck.rate=1Gbps" --set "flows[0].rtt=20ms" --set "bottleneck.buffer=1bdp" \
        --set "duration=5s" >/dev/null
    for f in scenarios/default.toml scenarios/small/*.toml; do
        "$cclab" run "$f" --out "$out/$(basename "$f" .toml)" >/dev/null
    done
}

# rustc only warns of a processor it does not know and builds for the default one.
check_cpu() {
    rustc --print target-cpus | awk 'NR > 1 { print $1 }' | grep -qx -- "$CPU" ||
        fail "CCLAB_PGO_CPU=$CPU: not a processor rustc knows; allowed: native or a name" \
            "from 'rustc --print target-cpus' (e.g. x86-64-v2, x86-64-v3)"
}

# What the binary is built from, as one hash: the compiler, the flags, and every file of
# the sources and the training set (committed or not). Empty outside a git checkout.
fingerprint() {
    git rev-parse --git-dir >/dev/null 2>&1 || return 0
    {
        rustc -vV
        echo "cpu $CPU; RUSTFLAGS ${RUSTFLAGS:-}"
        git ls-files -z --cached --others --exclude-standard -- Cargo.toml Cargo.lock crates \
            bench scenarios scripts/build-pgo.sh | sort -z | xargs -0 -r sha256sum -- 2>/dev/null || true
    } | sha256sum | cut -d' ' -f1
}

main() {
    local rebuild=0 arg print
    for arg in "$@"; do
        case "$arg" in
            --skip-without-llvm) SKIP_WITHOUT_LLVM=1 ;;
            --rebuild) rebuild=1 ;;
            *) fail "unknown argument $arg; usage: bash scripts/build-pgo.sh [--skip-without-llvm] [--rebuild]" ;;
        esac
    done
    check_cpu
    print=$(fingerprint)
    if [ "$rebuild" = 0 ] && [ -n "$print" ] && [ -x "$USE_DIR/release/cclab" ] &&
        [ "$(cat "$USE_DIR/fingerprint" 2>/dev/null)" = "$print" ]; then
        echo "the profile-guided build of these sources is up to date (--rebuild builds it anew)" >&2
        echo "$USE_DIR/release/cclab"
        return
    fi
    rm -f "$USE_DIR/fingerprint"
    find_profdata
    echo "1/3 instrumented build in $GEN_DIR" >&2
    rm -rf "$PROFILE_DIR"
    mkdir -p "$PROFILE_DIR"
    RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-cpu=$CPU -Cprofile-generate=$(realpath "$PROFILE_DIR")/raw" \
        CARGO_TARGET_DIR="$GEN_DIR" cargo build --release --quiet -p cclab
    echo "2/3 training runs" >&2
    train "$GEN_DIR/release/cclab"
    "$PROFDATA" merge -o "$PROFILE_DIR/cclab.profdata" "$PROFILE_DIR/raw"
    echo "3/3 optimised build in $USE_DIR" >&2
    RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-cpu=$CPU -Cprofile-use=$(realpath "$PROFILE_DIR")/cclab.profdata" \
        CARGO_TARGET_DIR="$USE_DIR" cargo build --release --quiet -p cclab
    check_same_results "$USE_DIR/release/cclab"
    [ -z "$print" ] || echo "$print" >"$USE_DIR/fingerprint"
    echo "$USE_DIR/release/cclab"
}

# The PGO binary's results folders equal the plain build's (perf.json, which times the
# run, aside) on the default scenario, the small scenario files and 100 CUBIC flows, or
# this script fails.
check_same_results() {
    local pgo=$1 out="$SCRATCH/check" f name
    cargo build --release --quiet -p cclab
    for f in scenarios/default.toml scenarios/small/*.toml; do
        name=$(basename "$f" .toml)
        "$TARGET/release/cclab" run "$f" --out "$out/plain/$name" >/dev/null
        "$pgo" run "$f" --out "$out/pgo/$name" >/dev/null
    done
    local many=(--set "flows[0].count=100" --set "bottleneck.rate=1Gbps" --set "duration=5s")
    "$TARGET/release/cclab" run bench/ns3/dumbbell.toml --out "$out/plain/many" "${many[@]}" >/dev/null
    "$pgo" run bench/ns3/dumbbell.toml --out "$out/pgo/many" "${many[@]}" >/dev/null
    diff -r -q -x perf.json "$out/plain" "$out/pgo" >&2 ||
        fail "the PGO build's results differ from the plain build's (above)"
}

main "$@"
