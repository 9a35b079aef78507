"""Sweeps: every point of a ``[sweep]`` on local threads or as Ray tasks, into the same
results folder and ``sweep.csv`` as ``cclab run`` writes for the sweep file."""

import io
import numbers
import os
import shutil
import tempfile
import warnings
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from . import _cclab
from ._errors import RunError, ScenarioError
from .scenario import Scenario, Source


class SweepError(RunError):
    """Some runs of a sweep failed: ``failures`` lists their messages (as ``cclab run``
    prints them) and ``table`` holds the rows of the runs that succeeded."""

    def __init__(self, message: str, failures: List[str], table: pd.DataFrame) -> None:
        super().__init__(message)
        self.failures = failures
        self.table = table

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.failures, self.table), self.__dict__)


def sweep(
    scenario: Scenario,
    grid: Optional[Dict[str, List[Any]]] = None,
    seeds: Optional[int] = None,
    backend: str = "local",
    jobs: Optional[int] = None,
    out: Optional[str] = None,
    progress: bool = True,
    max_retries: int = 3,
) -> pd.DataFrame:
    """Runs every point of a sweep and returns ``sweep.csv`` as a DataFrame: one row per
    run and flow (run, point, seed, one column per swept field, the run-level values of
    summary.json, then ``flow.*``), the same rows whichever backend runs it.

    - ``grid``: ``{field: [values]}`` as a ``[sweep]`` table takes them (README,
      "Sweeps"); without it, ``scenario`` must have its own ``[sweep]``.
    - ``seeds``: each point runs with seeds ``seed``, ``seed+1``, ... ``seed+seeds-1``.
    - ``backend``: ``"local"`` (``jobs`` threads, default the number of cores) or
      ``"ray"``: one task per run on the cluster ``ray.init()`` connected to (a local
      one if none), results gathered as they finish; a task whose worker dies is
      retried up to ``max_retries`` times. Workers need cclab installed and, for
      scenarios with traces, the trace files at the same paths.
    - ``out``: keep the sweep's results folder there (``points/<k>/``, sweep.json,
      sweep.csv, sweep.parquet, sweep.html, as ``cclab run`` writes it); a rerun with
      the same ``out`` runs only what is missing. Default: a temporary folder, removed.
    - ``progress``: a tqdm bar (works in notebooks).

    Raises :class:`SweepError` (with the table of the runs that succeeded) when runs
    fail, and :class:`cclab.ScenarioError` before anything runs for a bad point.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"expected a cclab.Scenario, not {type(scenario).__name__}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1):
        raise ValueError(f"jobs = {jobs!r}: must be an integer of at least 1 (None: one per core)")
    if grid is not None or (seeds is not None and not scenario.is_sweep):
        scenario = scenario.with_sweep(grid or {}, seeds)
    elif seeds is not None:
        try:
            scenario = scenario.copy().set("sweep.seeds", seeds)
        except ScenarioError as e:  # an argument, not a Scenario.set of the caller's
            raise ScenarioError(
                f"seeds: {e.field} = {e.value}: {e.message}", "<seeds>", None, False, e.field, e.value, e.message
            ) from None
    elif not scenario.is_sweep:
        raise ValueError(
            f"{scenario.file} has no [sweep] table: give grid={{field: [values], ...}} "
            "and/or seeds=N (or run it once with cclab.run)"
        )
    if backend not in ("local", "ray"):
        raise ValueError(f'backend={backend!r}: expected "local" or "ray"')
    src = scenario._source()
    plan = _cclab.SweepPlan(src)
    for field, set_path in plan.overridden(scenario.overrides):
        warnings.warn(
            f"set({field!r}, ...) has no effect: the sweep sets {field} in every run (to change "
            f"the swept values, give them in grid= or with set({set_path!r}, [...]))",
            stacklevel=2,
        )
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="cclab-sweep-")
        out = os.path.join(tmp, "sweep")
    out = os.fspath(out)
    try:
        note = plan.prepare(out)
        if note is not None:
            warnings.warn(note, stacklevel=2)
        todo = plan.todo(out)
        total = len(plan.runs())
        bar = _bar(progress, plan.name, total, total - len(todo))
        try:
            if backend == "local":
                failures = _run_local(plan, out, todo, jobs, bar)
            else:
                failures = _run_ray(src, plan, out, todo, bar, max_retries)
        finally:
            bar.close()
        failed = [m for _, m in sorted(failures)]
        table = read_sweep_csv(plan.finish(out, failed))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        raise SweepError(
            f"{len(failed)} of {total} runs failed: " + "; ".join(failed), failed, table
        )
    return table


def _cores() -> int:
    """The cores this process may use (its affinity), as ``cclab run`` counts them."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def read_sweep_csv(text: str) -> pd.DataFrame:
    """sweep.csv's text as a DataFrame (numbers as numbers, empty cells as NaN)."""
    if not text.strip():
        return pd.DataFrame()
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])


def _bar(progress: bool, name: str, total: int, initial: int) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=name, unit="run", disable=not progress)


def _run_local(plan: Any, out: str, todo: List[int], jobs: Optional[int], bar: Any) -> List[Tuple[int, str]]:
    """Runs on `jobs` threads (each run releases the GIL). Ctrl-C cancels the runs not
    started; those going finish first."""
    jobs = max(1, min(jobs or _cores(), max(len(todo), 1)))
    failures: List[Tuple[int, str]] = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        pending = {pool.submit(plan.run_one, out, k): k for k in todo}
        while pending:
            done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                k = pending.pop(f)
                msg = f.result()
                if msg is not None:
                    failures.append((k, msg))
                    bar.write(msg)
                bar.update(1)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return failures


# One plan per source in each Ray worker process: expanding a sweep checks every point.
_plans: Dict[Any, Any] = {}


def _plan_of(src: Source) -> Any:
    key = (src[0], src[1], src[2], src[3], tuple(src[4]))
    if key not in _plans:
        _plans.clear()
        _plans[key] = _cclab.SweepPlan(src)
    return _plans[key]


_SCRATCH_PREFIX = "cclab-point-"


def _remove_dead_workers_scratch() -> None:
    """Removes the scratch folders that workers killed in the middle of a run left on
    this node (their `finally` never ran): each is named after its worker's process id,
    and one whose process is gone is no one's. Without this, a long sweep on a cluster
    whose workers are preempted fills the nodes' temporary folders with run folders."""
    tmp = tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError:
        return
    for name in names:
        if not name.startswith(_SCRATCH_PREFIX):
            continue
        pid = name[len(_SCRATCH_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _process_exists(int(pid)):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def run_point(src: Source, k: int) -> Tuple[int, Optional[str], List[Tuple[str, bytes]]]:
    """Ray task body: runs run `k` in a scratch folder on the worker and returns (k,
    failure message or None, the run folder's files)."""
    plan = _plan_of(src)
    _remove_dead_workers_scratch()
    scratch = tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")
    try:
        msg = plan.run_one(scratch, k)
        if msg is not None:
            return k, msg, []
        folder = os.path.join(scratch, "points", str(k))
        files = []
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                files.append((name, f.read()))
        return k, None, files
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_ray(src: Source, plan: Any, out: str, todo: List[int], bar: Any, max_retries: int) -> List[Tuple[int, str]]:
    """One Ray task per run; each result is stored in `out/points/k` as it arrives
    (once: a retried task returns once)."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            'backend="ray" needs Ray, which cclab does not install: pip install "ray[default]" '
            '(or use backend="local", the machine\'s cores)'
        ) from e

    if not ray.is_initialized():
        ray.init()
    task = ray.remote(max_retries=max_retries)(run_point).options(name="cclab_run_point")
    # Workers do not share the driver's working folder: trace paths resolve from an
    # absolute base folder.
    text, file, base_dir, stem, overrides = src
    src = (text, file, os.path.abspath(base_dir) if base_dir else None, stem, overrides)
    run_of = {task.remote(src, k): k for k in todo}
    refs = list(run_of)
    failures: List[Tuple[int, str]] = []
    try:
        while refs:
            ready, refs = ray.wait(refs, num_returns=1)
            try:
                k, msg, files = ray.get(ready[0])
            except ray.exceptions.RayError as e:
                # A task that raised, or whose worker died past its retries, is one
                # failed run: the others go on and the sweep ends in SweepError.
                k = run_of[ready[0]]
                why = (str(e).strip().splitlines() or [type(e).__name__])[-1]
                msg, files = f"run {k} failed on Ray: {why}", None
            if msg is not None:
                failures.append((k, msg))
                bar.write(msg)
            else:
                plan.store(out, k, files)
            bar.update(1)
    except BaseException:
        for r in refs:
            ray.cancel(r)
        raise
    return failures
