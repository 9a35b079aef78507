"""A finished run: its results folder (the files ``cclab run`` writes) as Python objects."""

import json
import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, List, Optional

import pandas as pd

from . import _cclab

# flows.csv and queue.csv columns with their dtypes (README, "Result files"); the
# algorithms' own cc_* columns are floats, empty where a flow's algorithm lacks them.
FLOW_DTYPES = {
    "time_s": "float64",
    "flow": "int64",
    "cwnd_pkts": "int64",
    "ssthresh_pkts": "int64",
    "srtt_ms": "float64",
    "inflight_pkts": "int64",
    "delivered_bytes": "int64",
}
QUEUE_DTYPES = {"time_s": "float64", "packets": "int64", "bytes": "int64", "drops": "int64"}
# summary.json's "cross" entries (README, "Result files"); drops is a nullable integer,
# missing where the run could not count a source's drops (a testbed run).
CROSS_DTYPES = {
    "id": "int64",
    "kind": "object",
    "direction": "object",
    "active_s": "float64",
    "sent_packets": "int64",
    "sent_bytes": "int64",
    "delivered_packets": "int64",
    "delivered_bytes": "int64",
    "drops": "Int64",
    "offered_bps": "float64",
    "throughput_bps": "float64",
}


def read_flows_csv(path: str) -> pd.DataFrame:
    """flows.csv as a DataFrame with its dtypes."""
    header = pd.read_csv(path, nrows=0).columns
    dtypes = {c: FLOW_DTYPES.get(c, "float64") for c in header}
    return pd.read_csv(path, dtype=dtypes)


def read_queue_csv(path: str) -> pd.DataFrame:
    """queue.csv as a DataFrame with its dtypes."""
    return pd.read_csv(path, dtype=QUEUE_DTYPES)


def read_series(folder: str, stem: str) -> pd.DataFrame:
    """``<stem>.csv``, or ``<stem>.parquet`` where the run wrote Parquet (runs with more
    than 2,000,000 flow samples, or ``--series parquet``); the same columns and dtypes."""
    csv = os.path.join(folder, f"{stem}.csv")
    parquet = os.path.join(folder, f"{stem}.parquet")
    if not os.path.exists(csv) and os.path.exists(parquet):
        return pd.read_parquet(parquet)
    return read_flows_csv(csv) if stem == "flows" else read_queue_csv(csv)


class Result:
    """One run's results: ``summary`` (summary.json as a dict), ``flows`` and ``queue``
    (flows.csv and queue.csv as pandas DataFrames), ``cross`` (the cross-traffic sources'
    counts), :meth:`save` (the results folder as
    ``cclab run`` writes it) and :meth:`plot` (the report's four plots).

    The files live in a temporary folder removed with this object (:attr:`path`)."""

    def __init__(self, folder: str, scenario: Any, owned: Optional[str] = None) -> None:
        self.path = folder
        self.scenario = scenario
        self._flows: Optional[pd.DataFrame] = None
        self._queue: Optional[pd.DataFrame] = None
        if owned is not None:
            self._cleanup = weakref.finalize(self, shutil.rmtree, owned, True)

    @property
    def summary(self) -> Dict[str, Any]:
        """summary.json as a dict (a new one at each access)."""
        with open(os.path.join(self.path, "summary.json"), encoding="utf-8") as f:
            return json.load(f)

    @property
    def flows(self) -> pd.DataFrame:
        """flows.csv: one row per flow and sample (time_s, flow, cwnd_pkts,
        ssthresh_pkts, srtt_ms, inflight_pkts, delivered_bytes, then cc_* columns)."""
        if self._flows is None:
            self._flows = read_series(self.path, "flows")
        return self._flows.copy()

    @property
    def queue(self) -> pd.DataFrame:
        """queue.csv: the bottleneck queue per sample (time_s, packets, bytes, drops)."""
        if self._queue is None:
            self._queue = read_series(self.path, "queue")
        return self._queue.copy()

    @property
    def cross(self) -> pd.DataFrame:
        """summary.json's ``cross`` as a DataFrame: one row per cross-traffic source (id,
        kind, direction, active_s, sent_packets, sent_bytes, delivered_packets,
        delivered_bytes, drops, offered_bps, throughput_bps; rates over the source's
        active time). No rows for a run without cross traffic; ``drops`` is missing
        (``pd.NA``) where it was not measured (a testbed run)."""
        rows = self.summary.get("cross", [])
        frame = pd.DataFrame(rows, columns=list(CROSS_DTYPES))
        return frame.astype(CROSS_DTYPES)

    def to_polars(self) -> Dict[str, Any]:
        """``{"flows": ..., "queue": ..., "cross": ...}`` as polars DataFrames (needs
        polars)."""
        import polars as pl

        frames = {"flows": self.flows, "queue": self.queue, "cross": self.cross}
        return {name: pl.from_pandas(frame) for name, frame in frames.items()}

    def files(self) -> List[str]:
        """The names of the files in the results folder."""
        return sorted(os.listdir(self.path))

    def save(self, folder: str) -> None:
        """Writes the results folder to ``folder`` as ``cclab run --out folder`` does:
        staged beside it and moved into place; an existing folder is replaced only if it
        is a cclab results folder (has a summary.json) or empty."""
        _cclab.save(self.path, os.fspath(folder))

    def plot(self, max_flows: int = 16) -> Any:
        """The report's four plots (congestion window, goodput, bottleneck queue,
        smoothed RTT) as one matplotlib Figure (needs matplotlib)."""
        from .plot import four_plots

        return four_plots(self, max_flows)

    def __repr__(self) -> str:
        return f"<cclab.Result {self.scenario.name!r} at {self.path}>"


def new_folder() -> "tuple[str, str]":
    """A temporary folder and the results folder path inside it (not yet created)."""
    tmp = tempfile.mkdtemp(prefix="cclab-")
    return tmp, os.path.join(tmp, "run")
