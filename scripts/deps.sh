# shellcheck shell=bash
# The Debian packages cclab needs, in one place. Sourced by run-default.sh and test.sh, which
# install whatever of their list is missing (install_packages checks each package).
#
# PACKAGES: building cclab and running any of its commands. `cargo build -p cclab` builds
# every crate, the kernel one included, so this is more than the simulator alone needs;
# scripts/fresh-machine-check.sh proves the list complete on a clean Debian 12.
#   build-essential                C compiler and make (the cc crate, libbpf's Makefile)
#   pkg-config libelf-dev zlib1g-dev   libbpf-sys, which builds libbpf from source
#   clang libbpf-dev bpftool       the BPF programs (crates/kernel/build.rs): clang -target
#                                  bpf, <bpf/bpf_helpers.h>, vmlinux.h from the kernel's BTF
#   iproute2                       `ip` and `tc`, which the root commands (emu, testbed,
#                                  udp, kernel route) and their tests run
#   curl ca-certificates           rustup when cargo is missing; cargo's HTTPS to crates.io
PACKAGES="build-essential pkg-config libelf-dev zlib1g-dev clang libbpf-dev bpftool iproute2 curl ca-certificates"
# TEST_PACKAGES: what only scripts/test.sh adds to PACKAGES: the web lab's browser test
# (scripts/web-browser-test.sh) drives Debian's headless Chromium with Playwright, which it
# installs from PyPI into a virtual environment (python3-venv); the Python package's
# tests (scripts/python-test.sh) build and install it into another (python3-venv too:
# maturin, PyO3's abi3 build and Ray's wheels need nothing more from Debian).
# shellcheck disable=SC2034 # used by test.sh, which sources this file
TEST_PACKAGES="chromium python3-venv"

# Installs those of the given packages (default: PACKAGES) that are missing, with apt-get
# (needs root; without apt-get it only names them).
install_packages() {
    local wanted="${1:-$PACKAGES}" missing="" p
    for p in $wanted; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "apt-get not found; install these yourself if something fails:$missing" >&2
        return 0
    fi
    if [ "$(id -u)" != 0 ]; then
        echo "missing Debian packages:$missing; run this as root, or: sudo apt-get install$missing" >&2
        return 1
    fi
    echo "installing:$missing" >&2
    apt-get update -qq
    # shellcheck disable=SC2086 # one argument per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
}

# Puts cargo on PATH: rustup's usual place ($HOME/.cargo/bin) when it is there, else a fresh
# install with rustup.
ensure_cargo() {
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "cargo not found; installing Rust with rustup" >&2
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
}
