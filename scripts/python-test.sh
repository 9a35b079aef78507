#!/usr/bin/env bash
# The Python package (python/): builds and installs it with `pip install ./python` into a
# virtual environment made once in target/py-venv (pinned tools and libraries), checks
# its Rust crate (fmt, clippy) and runs its tests (python/tests: they compare with the
# `cclab` binary and execute the two notebooks in examples/). Needs python3-venv
# (scripts/deps.sh) and the build's own packages.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$CARGO_TARGET_DIR/py-venv"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
pins="maturin==1.16.0 pandas==3.1.1 polars==2.1.0 pyarrow==26.0.1 ray==2.60.0 pytest==9.2.0
      nbconvert==7.17.2 ipykernel==7.4.0 matplotlib==3.11.2 tqdm==4.70.1"
stamp="$venv/.cclab-pins"
if [ "$(cat "$stamp" 2>/dev/null)" != "$pins" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    # shellcheck disable=SC2086 # one argument per package
    "$venv/bin/pip" install --quiet --disable-pip-version-check $pins
    echo "$pins" >"$stamp"
fi
export PATH="$venv/bin:$PATH"

echo "== python/: cargo fmt --check, clippy"
cargo fmt --manifest-path python/Cargo.toml -- --check
cargo clippy --manifest-path python/Cargo.toml --release --quiet -- -D warnings
echo "== pip install ./python"
cargo build --release -p cclab --quiet  # the tests compare with it
pip install --quiet --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./python
echo "== pytest python/tests"
export CCLAB_BIN="$CARGO_TARGET_DIR/release/cclab" MPLBACKEND=Agg
# From the repository's root, so `import cclab` is the installed package. The tests
# include both notebooks in examples/, executed top to bottom.
pytest -q -p no:cacheprovider python/tests
