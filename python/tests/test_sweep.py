"""cclab.sweep: the rows of the CLI's sweep.csv, the same on local threads and on a
local Ray cluster, and no run lost or doubled when a Ray worker is killed."""

import os
import signal
import threading
import time

import pandas as pd
import pytest

import cclab
from conftest import SHORT

GRID = {"flows[0].cc": ["cubic", "reno"], "flows[0].rtt, flows[1].rtt": [["40ms", "60ms"], "80ms"]}


def sweep_file(tmp_path, text):
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_local_sweep_gives_the_cli_sweep_csv(cli, tmp_path):
    scn = cclab.Scenario.from_toml(SHORT).set("duration", "2s")
    df = cclab.sweep(scn, grid=GRID, seeds=2, out=tmp_path / "py", progress=False, jobs=2)
    with pytest.warns(UserWarning, match="duration=2s"):  # given again as --set below
        text = scn.with_sweep(GRID, 2).to_toml()
    path = sweep_file(tmp_path, text)
    status, _, err = cli("run", path, "--set", "duration=2s", "--out", tmp_path / "cli", "--jobs", 2)
    assert status == 0, err
    assert (tmp_path / "py" / "sweep.csv").read_bytes() == (tmp_path / "cli" / "sweep.csv").read_bytes()
    assert (tmp_path / "py" / "sweep.parquet").read_bytes() == (tmp_path / "cli" / "sweep.parquet").read_bytes()
    cli_df = pd.read_csv(tmp_path / "cli" / "sweep.csv")
    pd.testing.assert_frame_equal(df, cli_df)
    assert len(df) == 2 * 2 * 2 * 2  # points x seeds x flows
    assert sorted(df["run"].unique()) == list(range(8))
    assert set(df["flows[0].cc"]) == {"cubic", "reno"}
    # A rerun with the same out finds every run done.
    again = cclab.sweep(scn, grid=GRID, seeds=2, out=tmp_path / "py", progress=False)
    pd.testing.assert_frame_equal(again, df)


def test_a_file_with_its_own_sweep(cli, tmp_path):
    text = SHORT.replace('duration = "4s"', 'duration = "2s"') + '[sweep]\n"bottleneck.loss" = [0.0, 0.01]\n'
    path = sweep_file(tmp_path, text)
    df = cclab.sweep(cclab.Scenario.from_toml(path), progress=False)
    cli("run", path, "--out", tmp_path / "cli")
    pd.testing.assert_frame_equal(df, pd.read_csv(tmp_path / "cli" / "sweep.csv"))


def test_a_set_of_a_swept_field_is_said_to_have_no_effect(tmp_path):
    # As `cclab run FILE --set flows[0].cc=bic` warns: every run takes the sweep's value.
    scn = cclab.Scenario.from_toml(SHORT).set({"duration": "1s", "flows[0].cc": "bic"})
    with pytest.warns(UserWarning, match=r"set\('flows\[0\].cc', ...\) has no effect: the sweep sets") as caught:
        df = cclab.sweep(scn, grid={"flows[0].cc": ["reno"]}, out=tmp_path / "s", progress=False)
    assert "set('sweep.\"flows[0].cc\"', [...])" in str(caught[0].message), caught[0].message
    assert set(df["flow.cc"][df["flow.id"] == 0]) == {"reno"}
    # A field the sweep does not set is no warning.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cclab.sweep(scn, grid={"bottleneck.loss": [0.0]}, out=tmp_path / "t", progress=False)


@pytest.fixture(scope="module")
def ray_scratch(tmp_path_factory):
    """The temporary folder of the cluster's workers, where their runs' scratch goes."""
    return tmp_path_factory.mktemp("ray-workers-tmp")


@pytest.fixture(scope="module")
def ray_cluster(ray_scratch):
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"TMPDIR": str(ray_scratch)}},
    )
    yield ray
    ray.shutdown()


def test_ray_and_local_give_identical_frames(ray_cluster, tmp_path):
    scn = cclab.Scenario.from_toml(SHORT).set("duration", "2s")
    local = cclab.sweep(scn, grid=GRID, seeds=2, backend="local", progress=False)
    on_ray = cclab.sweep(scn, grid=GRID, seeds=2, backend="ray", out=tmp_path / "ray", progress=False)
    pd.testing.assert_frame_equal(local, on_ray)
    assert sorted(os.listdir(tmp_path / "ray" / "points")) == [str(k) for k in range(8)]


def test_ray_finds_traces_named_relative_to_a_relative_file(ray_cluster, monkeypatch):
    from conftest import REPO

    monkeypatch.chdir(REPO / "scenarios")
    scn = cclab.Scenario.from_toml("seeds/002-tahoe-vs-cubic-low-bdp.toml").set("duration", "2s")
    grid = {"flows[1].cc": ["tahoe", "cubic"]}
    local = cclab.sweep(scn, grid=grid, backend="local", progress=False)
    on_ray = cclab.sweep(scn, grid=grid, backend="ray", progress=False)
    pd.testing.assert_frame_equal(local, on_ray)
    assert len(on_ray) == 4 and (on_ray["flow.goodput_bps"] > 0).all()


def ray_task_pids():
    """Worker processes running a cclab run right now (Ray titles them ray::TASK)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if cmdline.startswith(b"ray::cclab_run_point"):
            pids.append(int(entry))
    return pids


# Runs of about half a second each (about five million packets: the random loss is off,
# as it would keep the windows small), so a worker is caught in the middle of one. At
# 200 Mbit/s for 8 s with the loss on, a run took 20 ms and the killer could miss every one.
def half_second_runs():
    return (
        cclab.Scenario.from_toml(SHORT)
        .set("bottleneck.rate", "1Gbps")
        .set("bottleneck.loss", 0)
        .set("duration", "60s")
    )


def worker_killer(killed):
    """A thread that SIGKILLs the first Ray worker found running a point (its pid into
    `killed`)."""

    def kill_one():
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for pid in ray_task_pids():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.02)

    return threading.Thread(target=kill_one)


def test_a_killed_ray_worker_loses_and_doubles_nothing(ray_cluster, ray_scratch):
    scn = half_second_runs()
    grid = {"flows[0].cc": ["cubic", "reno", "vegas"]}
    killed = []
    # Scratch folders of a worker long gone (no process has that id: above Linux's
    # pid_max) and of one alive (this process): only the first is anyone's to remove.
    dead = ray_scratch / "cclab-point-4194304-planted"
    alive = ray_scratch / f"cclab-point-{os.getpid()}-planted"
    dead.mkdir()
    alive.mkdir()
    killer = worker_killer(killed)
    killer.start()
    on_ray = cclab.sweep(scn, grid=grid, seeds=2, backend="ray", progress=False)
    killer.join()
    assert killed, "no worker was caught running a point"
    local = cclab.sweep(scn, grid=grid, seeds=2, backend="local", progress=False)
    pd.testing.assert_frame_equal(local, on_ray)
    assert sorted(on_ray["run"].unique()) == list(range(6))
    assert on_ray.groupby("run").size().eq(2).all()  # two flows per run, once each
    # The killed worker's scratch folder and the planted dead one were removed by later
    # tasks on the node; the living process's was not.
    assert sorted(ray_scratch.glob("cclab-point-*")) == [alive]
    alive.rmdir()


def test_a_ray_task_past_its_retries_is_one_failed_run(ray_cluster):
    """With no retries, a killed worker's run fails and the others finish: the sweep
    ends in SweepError with their table (code review, 2026-12-06: the first such task
    aborted the whole sweep)."""
    grid = {"flows[0].cc": ["cubic", "reno", "vegas"]}
    killed = []
    killer = worker_killer(killed)
    killer.start()
    with pytest.raises(cclab.SweepError) as info:
        cclab.sweep(half_second_runs(), grid=grid, backend="ray", progress=False, max_retries=0)
    killer.join()
    assert killed, "no worker was caught running a point"
    e = info.value
    assert len(e.failures) == 1 and "failed on Ray" in e.failures[0], e.failures
    assert sorted(e.table["run"].unique()) == [r for r in range(3) if f"run {r} " not in e.failures[0]]


def test_one_failing_run_is_reported_and_the_others_finish(cli, tmp_path):
    # Run 2's folder is taken by something that is not a results folder: it is refused
    # when that run comes to write its results (as in crates/cli/tests/sweep.rs).
    scn = cclab.Scenario.from_toml(SHORT).set("duration", "2s")
    for out in ("py", "cli"):
        (tmp_path / out / "points" / "2").mkdir(parents=True)
        (tmp_path / out / "sweep.json").write_text("{}\n")
        (tmp_path / out / "points" / "2" / "notes.txt").write_text("mine\n")
    with pytest.raises(cclab.SweepError) as caught:
        cclab.sweep(scn, grid=GRID, seeds=2, out=tmp_path / "py", progress=False)
    e = caught.value
    assert len(e.failures) == 1 and e.failures[0].startswith("run 2 (point 1, seed 7: ")
    assert "is not a cclab results folder" in e.failures[0]
    assert sorted(e.table["run"].unique()) == [0, 1, 3, 4, 5, 6, 7]
    assert (tmp_path / "py" / "points" / "2" / "notes.txt").read_text() == "mine\n"
    with pytest.warns(UserWarning, match="duration=2s"):  # given again as --set below
        path = sweep_file(tmp_path, scn.with_sweep(GRID, 2).to_toml())
    status, _, err = cli("run", path, "--set", "duration=2s", "--out", tmp_path / "cli")
    assert status == 1 and e.failures[0].replace(str(tmp_path / "py"), str(tmp_path / "cli")) in err
    assert (tmp_path / "py" / "sweep.csv").read_bytes() == (tmp_path / "cli" / "sweep.csv").read_bytes()


def test_a_sweep_over_an_earlier_larger_one_says_what_it_removes(tmp_path):
    # The folder is the sweep's, so a smaller grid replaces the earlier runs: said, not silent.
    scn = cclab.Scenario.from_toml(SHORT).set("duration", "2s")
    cclab.sweep(scn, grid=GRID, seeds=2, out=tmp_path / "s", progress=False)
    with pytest.warns(UserWarning, match="4 runs beyond this sweep's last were removed"):
        cclab.sweep(scn, grid=GRID, seeds=1, out=tmp_path / "s", progress=False)
