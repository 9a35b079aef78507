"""Shared pieces of the Python package's tests: the `cclab` binary (run only to compare
its output with the package's), the repository, and a short scenario."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Short, but with everything seeded: random cross traffic and random loss.
SHORT = """name = "short"
duration = "4s"
seed = 7
[bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "1bdp"
loss = 0.001
[[flows]]
cc = "cubic"
rtt = "40ms"
[[flows]]
cc = "reno"
rtt = "60ms"
start = "0.5s"
[[cross]]
kind = "exponential"
rate = "500Kbps"
count = 2
"""


def cclab_bin() -> Path:
    exe = os.environ.get("CCLAB_BIN")
    if exe:
        return Path(exe)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "cclab"


@pytest.fixture(scope="session")
def cli():
    """Runs the `cclab` binary; returns (exit status, stdout, stderr)."""
    exe = cclab_bin()
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: build it with cargo build --release -p cclab (or set CCLAB_BIN)")

    def run(*args):
        p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture
def short_file(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text(SHORT)
    return path


def same_files(a: Path, b: Path, skip=("perf.json",)):
    """Asserts two results folders hold the same files with the same bytes (perf.json
    holds wall-clock figures)."""
    names_a = sorted(p.name for p in a.iterdir())
    names_b = sorted(p.name for p in b.iterdir())
    assert names_a == names_b
    for name in names_a:
        if name in skip:
            continue
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
