"""Every kind of error, with its attributes, as the CLI reports it."""

import pytest

import cclab
from conftest import SHORT

# (what is wrong, file text): each one the CLI refuses with a line number.
BAD_FILES = [
    ("syntax", SHORT.replace('rate = "10Mbps"', 'rate = "10Mbps')),
    ("unknown field", SHORT.replace('delay = "10ms"', 'delay = "10ms"\ncolour = "red"')),
    ("unknown algorithm", SHORT.replace('cc = "reno"', 'cc = "renoo"')),
    ("bad unit", SHORT.replace('rtt = "40ms"', 'rtt = "40 parsecs"')),
    ("out of range", SHORT.replace("loss = 0.001", "loss = 1.5")),
    ("bad parameter", SHORT.replace('cc = "cubic"', 'cc = "cubic"\nparams = { beta = 7 }')),
    ("rtt below the bottleneck delay", SHORT.replace('rtt = "40ms"', 'rtt = "5ms"')),
    ("bad sweep value", SHORT + '[sweep]\n"flows[0].cc" = ["cubic", "cubik"]\n'),
    ("bad sweep key", SHORT + '[sweep]\n"flows[9].cc" = ["cubic"]\n'),
]


def cli_error(cli, *args):
    status, _, err = cli("run", *args)
    assert status == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: ")
    return line[len("error: "):]


@pytest.mark.parametrize("what,text", BAD_FILES, ids=[w for w, _ in BAD_FILES])
def test_file_errors_carry_the_cli_parts(cli, tmp_path, what, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    expected = cli_error(cli, path, "--out", tmp_path / "out")
    with pytest.raises(cclab.ScenarioError) as caught:
        cclab.Scenario.from_toml(path)
    e = caught.value
    assert str(e) == expected
    assert e.file == str(path)
    assert isinstance(e.line, int) and e.line > 0
    assert f"{e.file}:{e.line}: " in expected
    assert e.message and expected.endswith(e.message)
    assert not e.from_override
    if e.field:
        assert f"{e.field}" in expected
    if e.value is not None:
        assert e.value in expected
    # The same text passed as a string gives the same parts, named <string>.
    with pytest.raises(cclab.ScenarioError) as again:
        cclab.Scenario.from_toml(text)
    assert (again.value.file, again.value.line, again.value.field, again.value.value, again.value.message) == (
        "<string>", e.line, e.field, e.value, e.message
    )


def test_field_and_value_attributes(tmp_path):
    with pytest.raises(cclab.ScenarioError) as caught:
        cclab.Scenario.from_toml(SHORT.replace('cc = "reno"', 'cc = "renoo"'))
    e = caught.value
    assert (e.field, e.value, e.line) == ("flows[1].cc", '"renoo"', 13)
    assert "unknown algorithm" in e.message and isinstance(e, ValueError)


@pytest.mark.parametrize(
    "field,value",
    [("flows[0].cc", "cubik"), ("bottleneck.rate", "fast"), ("flows[5].rtt", "10ms"), ("duration", "-1s"), ("no such", "1")],
)
def test_set_errors_carry_the_cli_parts(cli, short_file, tmp_path, field, value):
    expected = cli_error(cli, short_file, "--set", f"{field}={value}", "--out", tmp_path / "out")
    scn = cclab.Scenario.from_toml(short_file)
    with pytest.raises(cclab.ScenarioError) as caught:
        scn.set(field, value)
    e = caught.value
    # The CLI's message, the value marked as Python's Scenario.set gave it.
    assert expected.startswith(f"{short_file} (--set): ")
    assert str(e) == expected.replace(" (--set): ", " (Scenario.set): ", 1)
    assert e.from_override and e.line is None and e.file == str(short_file)
    assert scn.overrides == []  # unchanged
    cclab.run(scn.set("duration", "1s"))


def test_missing_file(cli, tmp_path):
    missing = tmp_path / "nope.toml"
    expected = cli_error(cli, missing, "--out", tmp_path / "out")
    with pytest.raises(cclab.ScenarioError) as caught:
        cclab.Scenario.from_toml(missing)
    assert str(caught.value) == expected
    assert caught.value.file == str(missing) and caught.value.line is None


def test_dict_errors_name_the_line_of_to_toml():
    d = {"duration": "3s", "bottleneck": {"rate": "10Mbps", "delay": "5ms"}, "flows": [{"cc": "cubik", "rtt": "20ms"}]}
    with pytest.raises(cclab.ScenarioError) as caught:
        cclab.Scenario.from_dict(d)
    e = caught.value
    assert e.file == "<dict>" and e.field == "flows[0].cc" and e.value == '"cubik"'
    text = cclab._cclab.toml_document(d)
    assert 'cc = "cubik"' in text.splitlines()[e.line - 1]
    with pytest.raises(TypeError, match=r"^duration: a value of type object cannot be written"):
        cclab.Scenario.from_dict({"duration": object()})


def test_values_python_cannot_write_name_their_field():
    d = {"duration": "3s", "flows": [{"cc": "cubic", "rtt": "20ms"}, {"cc": "reno", "params": {"beta": {1, 2}}}]}
    with pytest.raises(TypeError, match=r"^flows\[1\]\.params\.beta: a value of type set cannot be written in a scenario \(allowed: str, bool, int, float, list or dict\)"):
        cclab.Scenario.from_dict(d)
    with pytest.raises(TypeError, match=r"^bottleneck: the key 3 is of type int; scenario keys are strings"):
        cclab.Scenario.from_dict({"bottleneck": {3: "x"}})
    with pytest.raises(TypeError, match=r"^flows\[0\]\.bytes: 1267650600228229401496703205376: too large"):
        cclab.Scenario.from_dict({"flows": [{"bytes": 2**100}]})


def test_a_value_that_contains_itself_is_an_exception_not_a_crash():
    looped = {"duration": "3s"}
    looped["bottleneck"] = looped
    with pytest.raises(ValueError, match=r"^bottleneck\.bottleneck\..*nested more than 64 deep .*contain itself"):
        cclab.Scenario.from_dict(looped)
    deep = {}
    for _ in range(20_000):
        deep = {"x": deep}
    with pytest.raises(ValueError, match="nested more than 64 deep"):
        cclab.Scenario.from_dict(deep)
    listed = []
    listed.append(listed)
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(ValueError, match=r"^flows\[0\]\.params\.beta: \[0\]\[0\].*nested more than 64 deep"):
        scn.set("flows[0].params.beta", listed)
    assert scn.overrides == []  # unchanged


def test_arguments_of_the_wrong_type_are_named():
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(TypeError, match=r"^grid must be a dict of field -> list of values, not list$"):
        cclab.sweep(scn, grid=[1, 2], progress=False)
    with pytest.raises(TypeError, match=r"^field must be a str such as \"flows\[0\]\.rtt\", not NoneType$"):
        scn.set(None, 1)


def test_run_errors():
    sweep = cclab.Scenario.from_toml(SHORT + '[sweep]\n"flows[0].cc" = ["cubic", "reno"]\n')
    assert sweep.is_sweep
    with pytest.raises(cclab.RunError, match=r"\[sweep\]"):
        cclab.run(sweep)
    with pytest.raises(ValueError, match="already has a"):
        cclab.sweep(sweep, grid={"flows[1].cc": ["reno"]})


def test_live_change_errors():
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT))
    sim.run_until("1s")
    with pytest.raises(ValueError, match=r"flows\[0\]\.params\.beta = 7: .*"):
        sim.set_param(0, "beta", 7)
    with pytest.raises(ValueError, match="unknown|no parameter|not a parameter"):
        sim.set_param(0, "betta", 0.5)
    with pytest.raises(ValueError, match=r"flow"):
        sim.set_param(5, "beta", 0.5)
    with pytest.raises(ValueError, match="true: beta is a number, not a switch"):
        sim.set_param(0, "beta", True)
    with pytest.raises(ValueError, match="parsecs"):
        sim.run_until("2 parsecs")
    with pytest.raises(ValueError, match=r"t = 0.5 s: before now \(1 s\)"):
        sim.run_until("500ms")
    assert sim.run_until("1s") is False  # now itself: nothing to do
    assert sim.changes == []
    sim.finish()
    with pytest.raises(cclab.RunError, match="finished"):
        sim.run_until("3s")


def test_a_refused_change_leaves_the_run_where_it_was():
    """A change lands after the instants the scenario schedules something at (flow 1
    starts at 0.5 s); a refused one no longer steps over them first (code review,
    2026-12-06)."""
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT))
    sim.run_until("499999999ns")
    with pytest.raises(ValueError, match=r"flows\[0\]\.params\.beta = 7"):
        sim.set_param(0, "beta", 7)
    assert sim.now_ns == 499_999_999
    assert sim.set_param(0, "beta", 0.5) == 500_000_001  # stepped over the start now
    sim.finish()


def test_what_is_not_a_scenario_is_named_for_what_it_is(tmp_path):
    with pytest.raises(TypeError, match="path or TOML text"):
        cclab.Scenario.from_toml(123)
    # A path with .toml left off, and a folder: named as paths, not read as TOML text.
    for path in (str(tmp_path / "cubic-vs-reno"), str(tmp_path)):
        with pytest.raises(cclab.ScenarioError) as caught:
            cclab.Scenario.from_toml(path)
        assert caught.value.file == path and "TOML syntax" not in str(caught.value), str(caught.value)
    with pytest.raises(TypeError, match="expected a cclab.Scenario"):
        cclab.run(str(tmp_path / "x.toml"))


def test_seeds_flows_times_and_jobs_out_of_range_are_refused_by_name():
    scn = cclab.Scenario.from_toml(SHORT)
    for bad in (1.9, True, "abc"):
        with pytest.raises(TypeError, match=r"seed = "):
            cclab.run(scn, seed=bad)
    for bad in (-1, 2**63):
        with pytest.raises(ValueError, match=rf"^seed = {bad}: out of range; allowed: 0 to 2\^63 - 1$"):
            cclab.run(scn, seed=bad)
    np = pytest.importorskip("numpy")  # a seed or flow read from a DataFrame is numpy's
    assert cclab.run(scn, seed=np.int64(3)).summary["seed"] == 3
    sim = cclab.Simulation(scn)
    with pytest.raises(ValueError, match=r"flow = -1: no such flow; this run has 2"):
        sim.set_param(flow=-1, name="beta", value=0.5)
    sim.set_param(flow=np.int64(0), name="beta", value=np.float32(0.5))
    for bad in (float("nan"), -1):
        with pytest.raises(ValueError, match="is not a time"):
            sim.run_until(bad)
    for bad in (None, [1], True):  # no number of seconds: a TypeError, as set_param's
        with pytest.raises(TypeError, match="is not a time"):
            sim.run_until(bad)
    assert sim.run_until(float("inf")) is True  # capped at the end, as documented
    assert sim.now == scn.duration
    with pytest.raises(ValueError, match=r"jobs = 0"):
        cclab.sweep(scn, grid={"flows[0].cc": ["cubic"]}, jobs=0, progress=False)


def test_an_empty_grid_or_a_removed_sweep_is_refused_in_python_words():
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(ValueError, match=r"^the grid is empty: .*cclab.run\(scenario\) runs the scenario once$"):
        cclab.sweep(scn, grid={}, progress=False)
    removed = scn.copy().set("sweep", {})
    assert not removed.is_sweep
    with pytest.raises(ValueError, match=r'changed with set\("sweep", ...\)'):
        cclab.sweep(removed, grid={"flows[0].cc": ["bic"]}, progress=False)
    # Neither a grid nor seeds for a scenario without [sweep]: say what to give (it said
    # "<string>: has no [sweep] table"); seeds alone repeat the scenario.
    with pytest.raises(ValueError, match=r"has no \[sweep\] table: give grid="):
        cclab.sweep(scn, progress=False)
    assert sorted(cclab.sweep(scn, seeds=2, progress=False)["seed"].unique()) == [7, 8]
    # A bad seeds= is named as the argument, not as a Scenario.set the caller never made.
    swept = cclab.Scenario.from_toml(SHORT + '[sweep]\n"flows[0].cc" = ["reno", "bic"]\n')
    for scenario, grid in ((scn, None), (scn, {"flows[0].cc": ["bic"]}), (swept, None)):
        with pytest.raises(cclab.ScenarioError, match=r"^seeds: sweep.seeds = -1: allowed: "):
            cclab.sweep(scenario, grid=grid, seeds=-1, progress=False)


def test_a_bad_grid_value_names_the_grid_not_a_line_of_the_file():
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(cclab.ScenarioError) as caught:
        cclab.sweep(scn, grid={"flows[0].rtt": ["5ms"]}, progress=False)
    e = caught.value
    assert (e.file, e.line, e.field) == ("<grid>", None, "flows[0].rtt")
    assert str(e).startswith('grid: flows[0].rtt = "5ms": '), str(e)


def test_fields_that_constrain_each_other_are_set_together():
    # SHORT: 10 ms of bottleneck delay, flows of 40 ms RTT (at least 2 x the delay).
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(cclab.ScenarioError) as caught:
        scn.copy().set("bottleneck.delay", "30ms")
    assert caught.value.field == "flows[0].rtt"
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "give them in one call: set({'bottleneck.delay': ..., 'flows[0].rtt': ...})" in notes, notes
    # As `cclab run --set bottleneck.delay=30ms --set 'flows[0].rtt=100ms' ...`: checked once.
    both = scn.copy().set({"bottleneck.delay": "30ms", "flows[0].rtt": "100ms", "flows[1].rtt": "100ms"})
    assert both.overrides == ["bottleneck.delay=30ms", "flows[0].rtt=100ms", "flows[1].rtt=100ms"]
    with pytest.raises(TypeError, match=r"^set\(\) takes a field and its value, or one dict"):
        scn.set("bottleneck.delay")


def test_a_field_that_is_empty_or_holds_its_value_is_refused_as_such():
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(ValueError, match=r"^field 'flows\[0\].cc=reno': a field path has no \"=\"; give the value apart"):
        scn.set("flows[0].cc=reno", "x")
    with pytest.raises(ValueError, match=r"^field ' ': expected a field path such as"):
        scn.set(" ", "x")
    # An "=" inside a quoted key is the key's, as --set reads it.
    with pytest.raises(cclab.ScenarioError, match="a=b"):
        scn.set('flows[0].params."a=b"', 1)
    assert scn.overrides == []


def test_before_python_3_11_the_note_is_added_to_the_message():
    from cclab.scenario import _add_note

    class Pre311Error:  # what an exception of Python 3.9 or 3.10 offers: args, no add_note
        args = ("flows[0].rtt: too short", "kept")

    e = Pre311Error()
    _add_note(e, "set both at once")
    assert e.args == ("flows[0].rtt: too short\nset both at once", "kept")


def test_an_error_inside_the_field_set_gets_no_note():
    # The refused field lies inside the one set: the hint to set both at once is wrong.
    scn = cclab.Scenario.from_toml(SHORT)
    with pytest.raises(cclab.ScenarioError) as caught:
        scn.set("flows[0].params", {"beta": 2})
    assert caught.value.field == "flows[0].params.beta", caught.value.field
    assert not getattr(caught.value, "__notes__", []), caught.value.__notes__
    assert scn.overrides == []


def test_numpy_and_pandas_values_are_taken_as_python_values():
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    scn = cclab.Scenario.from_toml(SHORT)
    scn.set("cross[0].count", np.array(3))  # a 0-d array
    scn.set("cross[0].count", np.int64(3))
    scn.set("flows[0].params.hystart", np.bool_(False))
    scn.set("bottleneck.loss", np.float64(0.005))
    assert scn.overrides == ["cross[0].count=3", "cross[0].count=3", "flows[0].params.hystart=false", "bottleneck.loss=0.005"]
    grid = cclab.Scenario.from_toml(SHORT).with_sweep({"cross[0].count": np.arange(1, 3), "flows[1].rtt": pd.Series(["60ms", "80ms"])},
                          seeds=np.int64(2))
    assert grid.is_sweep
    assert '"cross[0].count" = [1, 2]' in grid.to_toml()
    assert "seeds = 2" in grid.to_toml()
    d = cclab.Scenario.from_dict({"duration": "2s", "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
                                  "flows": [{"cc": "cubic", "rtt": "40ms", "count": np.int64(2)}]})
    assert len(d.flows) == 2
    # A set has no order, so it is refused, naming the field.
    with pytest.raises(TypeError, match=r"^grid\['flows\[0\]\.cc'\]: must be a list|^grid\['flows\[0\]\.cc'\] must be a list"):
        cclab.Scenario.from_toml(SHORT).with_sweep({"flows[0].cc": {"cubic", "reno"}})


def test_errors_survive_pickling():
    """A Ray worker's or a process pool's error reaches the caller pickled (code review,
    2026-12-06: both failed to unpickle, for want of their arguments)."""
    import pickle

    import pandas as pd

    with pytest.raises(cclab.ScenarioError) as info:
        cclab.Scenario.from_toml(SHORT).set("duration", "-3s")
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cclab.ScenarioError and str(back) == str(e)
    parts = ("file", "line", "from_override", "field", "value", "message")
    assert [getattr(back, p) for p in parts] == [getattr(e, p) for p in parts]
    # set()'s hint to give fields that depend on each other together comes along.
    with pytest.raises(cclab.ScenarioError) as info:
        cclab.Scenario.from_toml(SHORT).set("bottleneck.delay", "30ms")
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and getattr(back, "__notes__", None) == getattr(e, "__notes__", None)
    assert "give them in one call" in "\n".join(getattr(back, "__notes__", [str(back)]))
    table = pd.DataFrame({"k": [0]})
    sweep_error = cclab.SweepError("1 of 2 runs failed", ["run 1 failed: x"], table)
    back = pickle.loads(pickle.dumps(sweep_error))
    assert str(back) == "1 of 2 runs failed" and back.failures == ["run 1 failed: x"]
    assert back.table.equals(table)


def test_a_replay_of_changes_given_by_set_is_refused():
    """set("changes", ...) replaces the whole table, the live changes' entries with it,
    so such a replay would not be the run (code review, 2026-12-06)."""
    planned = [{"at": "0.2s", "flow": 0, "set": {"beta": 0.6}}]
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT).set("changes", planned))
    sim.run_until("1s")
    sim.set_param(0, "beta", 0.5)
    with pytest.raises(ValueError, match=r"given by set\(\"changes\""):
        sim.replay_scenario()


def test_a_name_or_a_dict_of_the_wrong_type_is_named():
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT))
    with pytest.raises(TypeError, match=r"^name = 5: a parameter's name"):
        sim.set_param(0, 5, 0.5)
    with pytest.raises(TypeError, match=r"^from_dict takes a dict .*, not list$"):
        cclab.Scenario.from_dict([("duration", "1s")])


def test_a_live_switch_may_be_a_numpy_boolean():
    """As Scenario.set takes one (code review, 2026-12-06: set_param refused np.bool_)."""
    np = pytest.importorskip("numpy")
    sim = cclab.Simulation(cclab.Scenario.from_toml(SHORT))
    sim.run_until("1s")
    sim.set_param(0, "fast_convergence", np.bool_(False))
    sim.set_param(0, "beta", np.float32(0.5))
    assert [(c["name"], c["value"]) for c in sim.changes] == [("fast_convergence", False), ("beta", 0.5)]
