"""cclab.run against `cclab run`: the same bytes for the same scenario and seed."""

import json

import numpy as np
import pandas as pd
import pytest

import cclab
from conftest import REPO, same_files


def test_run_gives_the_cli_files_byte_for_byte(cli, short_file, tmp_path):
    status, _, err = cli("run", short_file, "--seed", 11, "--out", tmp_path / "cli")
    assert status == 0, err
    res = cclab.run(cclab.Scenario.from_toml(short_file), seed=11)
    cli_dir = tmp_path / "cli"
    assert open(f"{res.path}/summary.json", "rb").read() == (cli_dir / "summary.json").read_bytes()
    res.save(tmp_path / "py")
    same_files(tmp_path / "py", cli_dir)
    assert res.summary == json.loads((cli_dir / "summary.json").read_text())
    assert res.summary["seed"] == 11


def test_dataframes_hold_the_csv_values_with_dtypes(cli, short_file, tmp_path):
    cli("run", short_file, "--out", tmp_path / "cli")
    res = cclab.run(cclab.Scenario.from_toml(short_file))
    flows, queue = res.flows, res.queue
    assert list(flows.columns[:7]) == [
        "time_s", "flow", "cwnd_pkts", "ssthresh_pkts", "srtt_ms", "inflight_pkts", "delivered_bytes"
    ]
    assert flows["flow"].dtype == np.int64 and flows["cwnd_pkts"].dtype == np.int64
    assert flows["srtt_ms"].dtype == np.float64 and flows["delivered_bytes"].dtype == np.int64
    assert all(flows[c].dtype == np.float64 for c in flows.columns if c.startswith("cc_"))
    assert dict(queue.dtypes.astype(str)) == {"time_s": "float64", "packets": "int64", "bytes": "int64", "drops": "int64"}
    # Every value equals the CLI's file read as text.
    raw = pd.read_csv(tmp_path / "cli" / "flows.csv", dtype=str, keep_default_na=False)
    assert raw.shape == flows.shape
    for c in raw.columns:
        expected = pd.to_numeric(raw[c].replace("", np.nan))
        assert np.array_equal(expected.to_numpy(dtype=float), flows[c].to_numpy(dtype=float), equal_nan=True), c
    raw_q = pd.read_csv(tmp_path / "cli" / "queue.csv")
    pd.testing.assert_frame_equal(raw_q, queue, check_dtype=False)
    assert len(flows) > 100 and flows["delivered_bytes"].max() > 0


def test_cross_holds_each_sources_counts(short_file):
    res = cclab.run(cclab.Scenario.from_toml(short_file))
    cross = res.cross
    assert list(cross["id"]) == [0, 1] and list(cross["kind"]) == ["exponential"] * 2
    assert cross["drops"].dtype == "Int64" and cross["sent_packets"].dtype == np.int64
    for row, entry in zip(cross.to_dict("records"), res.summary["cross"]):
        assert row == entry
    assert list(cross.columns) == list(res.summary["cross"][0])
    # Each source offered about its 500 kbit/s and lost what the link dropped of it.
    assert all(300e3 < r < 700e3 for r in cross["offered_bps"]), cross
    assert (cross["sent_packets"] - cross["delivered_packets"] >= cross["drops"]).all(), cross
    # A run without cross traffic: the columns, no rows.
    plain = cclab.run(cclab.Scenario.from_toml(short_file).set("cross", []))
    assert "cross" not in plain.summary
    assert plain.cross.empty and list(plain.cross.columns) == list(cross.columns)
    assert dict(plain.cross.dtypes.astype(str)) == dict(cross.dtypes.astype(str))


def test_polars_frames_match(short_file):
    pl = pytest.importorskip("polars")
    res = cclab.run(cclab.Scenario.from_toml(short_file))
    frames = res.to_polars()
    assert isinstance(frames["flows"], pl.DataFrame)
    assert frames["flows"].shape == res.flows.shape
    assert frames["queue"]["packets"].to_list() == res.queue["packets"].tolist()
    assert frames["cross"]["delivered_bytes"].to_list() == res.cross["delivered_bytes"].tolist()


def test_the_default_and_a_dict_scenario(cli, tmp_path):
    status, _, err = cli("run", "--set", "duration=3s", "--out", tmp_path / "cli")
    assert status == 0, err
    res = cclab.run(cclab.Scenario.default().set("duration", "3s"))
    assert open(f"{res.path}/summary.json", "rb").read() == (tmp_path / "cli" / "summary.json").read_bytes()
    d = {
        "name": "from-dict",
        "duration": "3s",
        "bottleneck": {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "30ms"}, {"cc": "vegas", "rtt": "30ms", "params": {"alpha": 3}}],
    }
    scn = cclab.Scenario.from_dict(d)
    (tmp_path / "d.toml").write_text(scn.to_toml())
    cli("run", tmp_path / "d.toml", "--out", tmp_path / "cli-d")
    res = cclab.run(scn)
    assert open(f"{res.path}/summary.json", "rb").read() == (tmp_path / "cli-d" / "summary.json").read_bytes()
    assert [f["cc"] for f in res.summary["flows"]] == ["cubic", "vegas"]


def test_set_follows_the_cli_set_rules(cli, short_file, tmp_path):
    sets = ["bottleneck.rate=20Mbps", "flows[1].cc=tahoe", "flows[0].params.beta=0.5", 'bottleneck.qdisc={ kind = "red", max_p = 0.2 }']
    args = [a for s in sets for a in ("--set", s)]
    cli("run", short_file, *args, "--out", tmp_path / "cli")
    scn = cclab.Scenario.from_toml(short_file)
    scn.set("bottleneck.rate", "20Mbps").set("flows[1].cc", "tahoe").set("flows[0].params.beta", 0.5)
    scn.set("bottleneck.qdisc", {"kind": "red", "max_p": 0.2})
    res = cclab.run(scn)
    assert open(f"{res.path}/summary.json", "rb").read() == (tmp_path / "cli" / "summary.json").read_bytes()
    assert scn.flows == [("cubic#0", "cubic"), ("tahoe#1", "tahoe")]
    # The text alone lacks the changes: to_toml says so rather than lose them quietly.
    with pytest.warns(UserWarning, match=r"without the 4 change\(s\) made by set\(\): bottleneck.rate=20Mbps"):
        text = scn.to_toml()
    assert "tahoe" not in text


def test_save_refuses_a_folder_that_is_not_results(short_file, tmp_path):
    res = cclab.run(cclab.Scenario.from_toml(short_file))
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(cclab.RunError, match="not a cclab results folder") as caught:
        res.save(precious)
    assert str(caught.value).endswith("choose another folder"), str(caught.value)
    assert (precious / "notes.txt").read_text() == "keep me"
    with pytest.raises(cclab.RunError, match="^the results folder is an empty path; name a folder"):
        res.save("")
    res.save(tmp_path / "out")
    res.save(tmp_path / "out")  # a results folder is replaced
    assert (tmp_path / "out" / "summary.json").is_file()


def test_plot_draws_the_four_plots(short_file):
    import matplotlib

    matplotlib.use("Agg")
    res = cclab.run(cclab.Scenario.from_toml(short_file))
    fig = res.plot()
    titles = sorted(ax.get_title() for ax in fig.axes)
    assert titles == ["Bottleneck queue", "Congestion window", "Goodput", "Smoothed RTT"]
    cwnd = next(ax for ax in fig.axes if ax.get_title() == "Congestion window")
    assert len(cwnd.lines) == 2 and len(cwnd.lines[0].get_xdata()) > 100


def test_algorithms_table():
    df = cclab.algorithms()
    assert {"cubic", "reno", "tahoe", "cubic-fit"} <= set(df["algorithm"])
    beta = df[(df.algorithm == "cubic") & (df.param == "beta")].iloc[0]
    assert 0 < beta["default"] < 1 and beta["min"] <= beta["default"] <= beta["max"]
    # beta in (0, 1]: its min is not allowed, and the table says so.
    assert (beta["min"], bool(beta["min_exclusive"]), beta["allowed"]) == (0.0, True, "a number in (0, 1]")
    hystart = df[(df.algorithm == "cubic") & (df.param == "hystart")].iloc[0]
    assert not hystart["min_exclusive"]
    assert df[df.algorithm == "reno"]["param"].isna().all()
    assert df[df.algorithm == "reno"]["min_exclusive"].isna().all()


def test_a_trace_scenario_from_the_repository(cli, tmp_path):
    path = REPO / "scenarios" / "seeds" / "002-tahoe-vs-cubic-low-bdp.toml"
    cli("run", path, "--set", "duration=3s", "--out", tmp_path / "cli")
    res = cclab.run(cclab.Scenario.from_toml(path).set("duration", "3s"))
    assert open(f"{res.path}/summary.json", "rb").read() == (tmp_path / "cli" / "summary.json").read_bytes()


def test_parquet_series_read_as_the_csv_ones(cli, short_file, tmp_path):
    """A run written with --series parquet (what big runs get by default) gives the same
    DataFrames, with the same dtypes, as one written as CSV."""
    from cclab.results import Result

    for fmt in ("csv", "parquet"):
        status, _, err = cli("run", short_file, "--out", tmp_path / fmt, "--series", fmt)
        assert status == 0, err
    assert not (tmp_path / "parquet" / "flows.csv").exists()
    a, b = Result(str(tmp_path / "csv"), None), Result(str(tmp_path / "parquet"), None)
    for name in ("flows", "queue"):
        fa, fb = getattr(a, name), getattr(b, name)
        assert list(fa.dtypes.astype(str)) == list(fb.dtypes.astype(str)), name
        # CSV rounds srtt_ms to microseconds and cc_* to 6 decimals; Parquet keeps doubles.
        pd.testing.assert_frame_equal(fa, fb, check_exact=False, rtol=1e-6, atol=1e-3)


def test_a_result_keeps_the_scenario_it_ran(short_file):
    """The caller may change its scenario afterwards; the result's is the one that ran
    (code review, 2026-12-06: res.scenario followed the caller's changes)."""
    scn = cclab.Scenario.from_toml(short_file)
    res = cclab.run(scn)
    scn.set({"duration": "1s", "flows[1].cc": "vegas"})
    assert res.scenario.duration == 4.0
    assert [cc for _, cc in res.scenario.flows] == ["cubic", "reno"]


def test_a_scenario_file_read_by_a_relative_path_runs_after_chdir(tmp_path, monkeypatch):
    """Its trace paths resolve from the file's folder, also once the working folder
    changed (code review, 2026-12-06: they resolved from the new one)."""
    monkeypatch.chdir(REPO / "scenarios")
    scn = cclab.Scenario.from_toml("seeds/002-tahoe-vs-cubic-low-bdp.toml").set("duration", "1s")
    monkeypatch.chdir(tmp_path)
    assert cclab.run(scn.copy()).summary["flows"]
