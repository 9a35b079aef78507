#!/usr/bin/env bash
# Regenerates tests/golden/*.summary.json from scenarios/small/*.toml after an intended
# change to the simulator; review `git diff tests/golden` before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
UPDATE_GOLDEN=1 cargo test --release -p cclab --test golden
git --no-pager diff --stat -- tests/golden || true
