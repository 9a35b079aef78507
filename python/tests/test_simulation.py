"""Stepping and retuning: the same run as a [[changes]] entry; the GIL is released and
Ctrl-C stops a long run."""

import os
import signal
import subprocess
import threading
import time

import pytest

import cclab
from conftest import SHORT, same_files

# About a second of wall time: 1 Gbit/s for 20 s, without random loss.
LONG = (
    SHORT.replace('rate = "10Mbps"', 'rate = "1Gbps"')
    .replace('duration = "4s"', 'duration = "20s"')
    .replace("loss = 0.001", "loss = 0.0")
)


def test_stepping_with_a_change_is_the_run_with_a_changes_entry(cli, tmp_path):
    scn = cclab.Scenario.from_toml(SHORT)
    sim = cclab.Simulation(scn)
    assert sim.run_until("1.5s") is False
    assert sim.now == 1.5
    at = sim.set_param(flow=0, name="beta", value=0.5)
    assert at == 1_500_000_001
    sim.run_until(2.5)
    at2 = sim.set_param(flow=1, name="rto_min", value=50)
    at3 = sim.set_param(flow=0, name="fast_convergence", value=False)
    samples = sim.samples()
    assert samples["time_s"].max() == pytest.approx(2.5)
    res = sim.finish()
    assert sim.changes == [
        {"at_ns": at, "flow": 0, "name": "beta", "value": 0.5},
        {"at_ns": at2, "flow": 1, "name": "rto_min", "value": 50.0},
        {"at_ns": at3, "flow": 0, "name": "fast_convergence", "value": False},
    ]
    assert sim.changes[2]["value"] is False
    # The same run written by hand as [[changes]] entries, run by the CLI.
    text = SHORT + (
        f'\n[[changes]]\nat = "{at}ns"\nflow = 0\nset = {{ beta = 0.5 }}\n'
        f'\n[[changes]]\nat = "{at2}ns"\nflow = 1\nset = {{ rto_min = "50ms" }}\n'
        f'\n[[changes]]\nat = "{at3}ns"\nflow = 0\nset = {{ fast_convergence = false }}\n'
    )
    (tmp_path / "replay.toml").write_text(text)
    status, _, err = cli("run", tmp_path / "replay.toml", "--out", tmp_path / "cli")
    assert status == 0, err
    res.save(tmp_path / "py")
    same_files(tmp_path / "py", tmp_path / "cli")
    # replay_scenario writes the same entries, and the change did change the run.
    again = cclab.run(sim.replay_scenario())
    assert again.summary == res.summary
    assert cclab.run(scn).summary != res.summary
    assert len(samples) < len(res.flows)


def test_a_change_at_an_instant_the_scenario_schedules_lands_after_it(cli, tmp_path):
    # flows[1] starts at 0.5 s: a change made at 0.5 s - 1 ns is stepped past it.
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT))
    sim.run_until(0.499999999)
    at = sim.set_param(0, "beta", 0.6)
    assert at == 500_000_001
    res = sim.finish()
    text = SHORT + f'\n[[changes]]\nat = "{at}ns"\nflow = 0\nset = {{ beta = 0.6 }}\n'
    (tmp_path / "r.toml").write_text(text)
    cli("run", tmp_path / "r.toml", "--out", tmp_path / "cli")
    assert open(f"{res.path}/summary.json", "rb").read() == (tmp_path / "cli" / "summary.json").read_bytes()


def test_the_gil_is_released_during_a_long_run():
    scn = cclab.Scenario.from_toml(LONG)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.05)
        started = time.monotonic()
        before = counter[0]
        cclab.run(scn)
        during = counter[0] - before
        wall = time.monotonic() - started
    finally:
        stop.set()
        t.join()
    # Held for the whole call, the counter could not move; released, it counts freely.
    assert wall > 0.2, "the run is too short to tell"
    assert during > 10_000, (during, wall)


def test_stepping_releases_the_gil_too():
    sim = cclab.Simulation(cclab.Scenario.from_toml(LONG))
    counter = [0]
    stop = threading.Event()
    t = threading.Thread(target=lambda: [counter.__setitem__(0, counter[0] + 1) for _ in iter(stop.is_set, True)])
    t.start()
    try:
        before = counter[0]
        sim.run_until("10s")
        during = counter[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 1_000


def ctrl_c_in(seconds: float) -> subprocess.Popen:
    """SIGINT to this process from another one after `seconds`, as a terminal's Ctrl-C
    comes: its timing does not depend on any thread of ours getting the GIL."""
    return subprocess.Popen(["sh", "-c", f"sleep {seconds}; kill -INT {os.getpid()}"])


@pytest.fixture
def ctrl_c_raises():
    """Python's own SIGINT handler, whatever this process inherited: a shell starts a
    background job with SIGINT ignored, and Python then installs no handler, so Ctrl-C
    would never become KeyboardInterrupt (the suite run as `nohup ... &` failed here)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_stops_a_long_run(ctrl_c_raises):
    scn = cclab.Scenario.from_toml(LONG.replace('duration = "20s"', 'duration = "600s"'))
    started = time.monotonic()
    sender = ctrl_c_in(0.3)
    with pytest.raises(KeyboardInterrupt):
        cclab.run(scn)
    sender.wait()
    assert time.monotonic() - started < 10
    sim = cclab.Simulation(scn)
    sender = ctrl_c_in(0.3)
    with pytest.raises(KeyboardInterrupt):
        sim.run_until("600s")
    sender.wait()
    assert 0 < sim.now < 600


def test_a_simulation_used_from_two_threads_says_so():
    """run_until lets go of the GIL; a second thread touching the same Simulation then
    gets a message naming the cause, not PyO3's bare "Already borrowed"."""
    sim = cclab.Simulation(cclab.Scenario.from_toml(LONG))
    t = threading.Thread(target=lambda: sim.run_until(sim.scenario.duration))
    t.start()
    try:
        seen = None
        deadline = time.monotonic() + 5
        while t.is_alive() and seen is None and time.monotonic() < deadline:
            try:
                sim.now
            except RuntimeError as e:
                seen = str(e)
    finally:
        t.join()
    assert seen is not None, "the run ended before the second thread met it"
    assert "in use by another thread" in seen, seen
