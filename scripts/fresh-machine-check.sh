#!/usr/bin/env bash
# Checks the README's set-up on a fresh Debian 12 machine: builds a clean bookworm root file
# system from Debian's packages (mmdebstrap, variant minbase), gives it the Rust toolchain
# the way the machine image has it (rustup's, under /root), puts a clean clone of this
# repository's HEAD in it, and runs `bash scripts/run-default.sh` there with chroot. Passes
# when it exits 0, the summary table prints, results/default/summary.json exists and the BPF
# programs were built (not left empty for want of clang or bpftool).
#
#   bash scripts/fresh-machine-check.sh [--rebuild] [--test]
#
# --rebuild  build the cached base root file system again (Debian + toolchain)
# --test     afterwards also run `bash scripts/test.sh` in the same root file system (with
#            shared/traces copied beside the clone from $CCLAB_SHARED, default ../shared)
#
# Needs root (mounts, chroot) and mmdebstrap (installed with apt-get when missing). The base
# is cached in $CCLAB_FRESH_CACHE (default /var/cache/cclab-fresh), keyed by the suite, the
# variant, the apt sources and the toolchain; each run works on an overlay above it, so
# nothing a run installs ever reaches the cache. Cargo downloads crates inside the run, as
# a fresh machine would. Uncommitted changes are not part of the check (it clones HEAD).
set -euo pipefail

SUITE=bookworm
VARIANT=minbase
# Bump when the way the base is made changes, so old caches are not reused.
BASE_FORMAT=1
CACHE="${CCLAB_FRESH_CACHE:-/var/cache/cclab-fresh}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"

REBUILD=0
RUN_TESTS=0
for arg in "$@"; do
    case "$arg" in
        --rebuild) REBUILD=1 ;;
        --test) RUN_TESTS=1 ;;
        *) echo "fresh-machine-check: unknown argument '$arg' (allowed: --rebuild, --test)" >&2; exit 2 ;;
    esac
done

if [ "$(id -u)" != 0 ]; then
    echo "fresh-machine-check: needs root (it mounts and uses chroot)" >&2
    exit 2
fi

# All mounts below live in a private mount namespace: they vanish when the script ends,
# however it ends, and an unmount here never propagates to the host's /dev or /sys.
if [ -z "${CCLAB_FRESH_IN_NS:-}" ]; then
    CCLAB_FRESH_IN_NS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
fi

. "$REPO/scripts/deps.sh"
install_packages "mmdebstrap"

# The Debian archive and security URIs this machine's apt uses (deb822 or one-line form);
# the fresh root file system gets the same.
host_apt_uri() {
    local pattern="$1" f
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
        [ -f "$f" ] && grep -v '^[[:space:]]*#' "$f"
    done | grep -oE '(https?|file)://[^ ]*' | grep -E "$pattern" | head -n 1 || true
}
DEBIAN_URI="$(host_apt_uri '/debian/?$')"
DEBIAN_URI="${DEBIAN_URI:-http://deb.debian.org/debian}"
SECURITY_URI="$(host_apt_uri '/debian-security/?$')"
SECURITY_URI="${SECURITY_URI:-http://deb.debian.org/debian-security}"
SOURCES=(
    "deb $DEBIAN_URI $SUITE main"
    "deb $DEBIAN_URI $SUITE-updates main"
    "deb $SECURITY_URI $SUITE-security main"
)

# The toolchain rustup uses here (as `rustup show` reports), and nothing else: the image's
# other toolchains (nightly) are not needed to build cclab.
export PATH="$HOME/.cargo/bin:$PATH"
CARGO_DIR="${CARGO_HOME:-$HOME/.cargo}"
RUSTUP_DIR="${RUSTUP_HOME:-$HOME/.rustup}"
TOOLCHAIN="$(cd "$REPO" && rustup show active-toolchain | cut -d' ' -f1)"
TOOLCHAIN_DIR="$(readlink -f "$RUSTUP_DIR/toolchains/$TOOLCHAIN")"
RUSTC_VERSION="$("$TOOLCHAIN_DIR/bin/rustc" --version)"

KEY="$(printf '%s\n' "$BASE_FORMAT" "$SUITE" "$VARIANT" "${SOURCES[@]}" "$TOOLCHAIN" "$RUSTC_VERSION" \
    | sha256sum | cut -c1-16)"
BASE="$CACHE/base-$KEY"

# Copies rustup's toolchain into the root file system at the same place under /root, with
# rustup's settings and the names (symlinks) that point at the toolchain.
copy_toolchain() {
    local root="$1"
    mkdir -p "$root/root/.cargo" "$root/root/.rustup/toolchains"
    cp -a "$CARGO_DIR/bin" "$CARGO_DIR/env" "$root/root/.cargo/"
    cp -a "$RUSTUP_DIR/settings.toml" "$root/root/.rustup/"
    cp -a "$TOOLCHAIN_DIR" "$root/root/.rustup/toolchains/"
    local link
    for link in "$RUSTUP_DIR"/toolchains/*; do
        if [ -L "$link" ] && [ "$(readlink -f "$link")" = "$TOOLCHAIN_DIR" ]; then
            ln -s "/root/.rustup/toolchains/$(basename "$TOOLCHAIN_DIR")" \
                "$root/root/.rustup/toolchains/$(basename "$link")"
        fi
    done
}

# Debian from its packages plus the toolchain: what a fresh machine has before set-up.
build_base() {
    local tmp="$BASE.partial"
    rm -rf "$tmp"
    echo "== building the base root file system ($SUITE, $VARIANT) in $BASE"
    mmdebstrap --variant="$VARIANT" --quiet "$SUITE" "$tmp" "${SOURCES[@]}"
    copy_toolchain "$tmp"
    rm -rf "$BASE"
    mv "$tmp" "$BASE"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ "$REBUILD" = 1 ] || [ ! -d "$BASE" ]; then
    started=$SECONDS
    build_base
    echo "== base built in $((SECONDS - started)) s"
    find "$CACHE" -maxdepth 1 -name 'base-*' ! -name "base-$KEY" -exec rm -rf {} +
else
    echo "== reusing the base root file system $BASE (--rebuild to make it anew)"
fi
flock -u 9

# Each run works in /var/tmp/cclab-fresh.<pid>. A run killed with SIGKILL never ran its trap:
# its mounts went with its mount namespace, and its directory is removed here.
for old in /var/tmp/cclab-fresh.*; do
    [ -d "$old" ] && ! kill -0 "${old##*.}" 2>/dev/null && rm -rf "$old"
done
WORK="/var/tmp/cclab-fresh.$$"
rm -rf "$WORK"
ROOT="$WORK/root"
cleanup() {
    umount -R "$ROOT" 2>/dev/null || umount -R -l "$ROOT" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A pristine copy per run: writes go to the overlay's upper directory, which is thrown away.
mkdir -p "$WORK/upper" "$WORK/overlay-work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$WORK/upper,workdir=$WORK/overlay-work" "$ROOT"
mount -t proc proc "$ROOT/proc"
mount --rbind /sys "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
# This machine's locally trusted CA certificates, as its image has them (the network here
# may inspect TLS); Debian's ca-certificates adds them to the store when set-up installs it.
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp -a /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
fi

COMMIT="$(git -C "$REPO" rev-parse HEAD)"
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no)" ]; then
    echo "fresh-machine-check: note: uncommitted changes are not checked; checking $COMMIT" >&2
fi
git clone --quiet --no-checkout "$REPO" "$ROOT/root/cclab"
# Some tests read the mahimahi traces in shared/traces beside the clone, where CI has them.
SHARED="${CCLAB_SHARED:-$REPO/../shared}"
if [ "$RUN_TESTS" = 1 ] && [ -d "$SHARED/traces" ]; then
    mkdir -p "$ROOT/root/shared"
    cp -a "$SHARED/traces" "$ROOT/root/shared/"
fi
git -C "$ROOT/root/cclab" checkout --quiet --detach "$COMMIT"

# Runs a command in the fresh system as a new root login would see it: a clean environment
# and the default PATH (without ~/.cargo/bin; the scripts must find cargo themselves).
in_fresh() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd /root/cclab && $1"
}

LOG="$WORK/run-default.log"
echo "== bash scripts/run-default.sh (commit $COMMIT) in the fresh $SUITE root file system"
started=$SECONDS
status=0
in_fresh "bash scripts/run-default.sh" 2>&1 | tee "$LOG" || status=$?
echo "== run-default.sh exited $status after $((SECONDS - started)) s"

passed=0
failed=0
# check DESCRIPTION COMMAND...: runs COMMAND, counts and prints the outcome.
check() {
    local what="$1"
    shift
    if "$@"; then
        echo "ok: $what"
        passed=$((passed + 1))
    else
        echo "FAILED: $what"
        failed=$((failed + 1))
    fi
}
# Non-empty BPF objects: build.rs leaves them empty when clang, bpftool or BTF is missing.
bpf_objects_built() {
    find "$ROOT/root/cclab/target/release/build" -path "*/cclab-kernel-*/out/cclab_tuner.bpf.o" \
        -size +0 2>/dev/null | grep -q .
}
check "run-default.sh exits 0" test "$status" = 0
check "the summary table printed" grep -qE "^flow +name +cc +goodput" "$LOG"
check "results/default/summary.json exists" test -s "$ROOT/root/cclab/results/default/summary.json"
check "the BPF programs were built" bpf_objects_built

if [ "$RUN_TESTS" = 1 ]; then
    echo "== bash scripts/test.sh in the same root file system"
    started=$SECONDS
    test_status=0
    in_fresh "bash scripts/test.sh" 2>&1 | tee "$WORK/test.log" || test_status=$?
    echo "== test.sh exited $test_status after $((SECONDS - started)) s"
    check "test.sh exits 0" test "$test_status" = 0
fi

echo "fresh-machine-check: $passed passed, $failed failed"
[ "$failed" = 0 ]
