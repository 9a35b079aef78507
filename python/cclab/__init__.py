"""cclab from Python: scenarios, runs as DataFrames, stepping and retuning, sweeps on
local threads or on Ray. Everything runs in cclab's own Rust code (the same as the
``cclab`` command), so a run gives the same bytes as ``cclab run``.

>>> import cclab
>>> scn = cclab.Scenario.from_toml("scenarios/cubic-vs-reno.toml").set("duration", "10s")
>>> res = cclab.run(scn, seed=1)
>>> res.summary["flows"][0]["goodput_bps"], res.flows.head()
>>> cclab.sweep(scn, grid={"flows[0].cc": ["cubic", "reno"]}, seeds=2)
"""


# Private names (underscored) keep the package's namespace to its API.
from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

import pandas as _pd

from . import _cclab
from ._errors import RunError, ScenarioError
from .results import Result
from .run import Simulation, run
from .scenario import Scenario
from .sweep import SweepError, sweep

try:
    __version__ = _version("cclab")
except _PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "unknown"

__all__ = [
    "Scenario",
    "ScenarioError",
    "RunError",
    "SweepError",
    "Result",
    "Simulation",
    "run",
    "sweep",
    "algorithms",
]


def algorithms() -> _pd.DataFrame:
    """Every algorithm and parameter (``cclab algorithms``): one row per parameter
    (algorithm, summary, source, param, kind, default, min, min_exclusive, max, allowed,
    unit, doc); ``min_exclusive`` is True where ``min`` itself is not allowed (``beta``
    in (0, 1]). An algorithm without parameters has one row with the parameter columns
    empty."""
    columns = [
        "algorithm", "summary", "source", "param", "kind", "default",
        "min", "min_exclusive", "max", "allowed", "unit", "doc",
    ]  # fmt: skip
    df = _pd.DataFrame(_cclab.algorithms(), columns=columns)
    return df.astype({"default": "float64", "min": "float64", "min_exclusive": "boolean", "max": "float64"})
