"""The README's Python example, run as written: a user copies it first, so it must work.

The block is read from README.md (the first ```python block under "## Python") and run
in a temporary folder that holds the repository's scenarios, so its relative paths and
the results folder it writes resolve as they would in a clone."""

import re

import pytest

from conftest import REPO


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Python\n"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README's Python section has no ```python block"
    return match.group(1)


def test_the_readme_example_runs_as_written(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")  # the example's sweep runs on Ray; plots need matplotlib
    pytest.importorskip("matplotlib")
    (tmp_path / "scenarios").symlink_to(REPO / "scenarios")
    monkeypatch.chdir(tmp_path)
    code = readme_example()
    scope = {}
    try:
        exec(compile(code, "README.md (Python example)", "exec"), scope)
    finally:
        ray.shutdown()  # the example's backend="ray" started a local cluster
    # What the example's comments promise.
    assert scope["res"].summary["flows"][1]["cc"] == "tahoe"
    assert (tmp_path / "results" / "mine" / "summary.json").exists()
    with pytest.warns(UserWarning, match="made by set"):  # the example's set() calls
        assert scope["sim"].replay_scenario().to_toml().count("[[changes]]") == 1
    df = scope["df"]  # a row per run and flow: 2 RTTs x 3 seeds x 2 flows
    assert (len(df), df["run"].nunique()) == (12, 6)
    assert sorted(set(df["flows[0].rtt"])) == ["100ms", "40ms"]
