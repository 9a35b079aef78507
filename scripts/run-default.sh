#!/usr/bin/env bash
# Builds cclab (release) and runs its main job on the built-in default scenario: prints
# the per-flow summary table and writes results/<scenario name>/. Extra arguments go to
# `cclab run` (e.g. a scenario file, --set duration=10s).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
install_packages "$PACKAGES"
ensure_cargo
cargo build --release --quiet -p cclab
exec "${CARGO_TARGET_DIR:-target}/release/cclab" run "$@"
