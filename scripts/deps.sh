# The system packages cclab's build and tests need, in one place. Sourced by test.sh and
# run-default.sh; add to PACKAGES here (the kernel and emulator work need the BPF tools).
PACKAGES="build-essential curl ca-certificates clang llvm libbpf-dev bpftool iproute2 libelf-dev zlib1g-dev pkg-config"
# What building and running the simulator alone needs (scripts/run-default.sh).
BUILD_PACKAGES="build-essential curl ca-certificates pkg-config"
# The web lab's browser test (scripts/web-browser-test.sh): Debian's headless Chromium,
# and venv for the Playwright it installs from PyPI. Test-time only.
PACKAGES="$PACKAGES chromium python3-venv"

# Installs the given packages (default: PACKAGES) with apt-get when any is missing
# (needs root; skipped without apt-get).
install_packages() {
    local wanted="${1:-$PACKAGES}"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "apt-get not found; install these yourself if something is missing: $wanted" >&2
        return 0
    fi
    local missing=""
    for p in $wanted; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "installing:$missing" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    fi
}

# Installs Rust with rustup when cargo is missing, and puts cargo on PATH.
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
