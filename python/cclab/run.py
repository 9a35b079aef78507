"""Running scenarios: whole (:func:`run`) or stepped and retuned (:class:`Simulation`)."""

import numbers
from typing import Any, Dict, List, Optional, Union

import pandas as pd

from . import _cclab
from .results import Result, new_folder, read_flows_csv, read_queue_csv
from .scenario import Scenario, _plain

Time = Union[str, int, float]


def to_ns(t: Time) -> int:
    """A time as a scenario writes it ("30s", "250ms") or a number of seconds, in ns."""
    if isinstance(t, str):
        return _cclab.parse_duration(t)
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{t!r} is not a time: give seconds (a number >= 0) or a string like \"30s\"")
    if not t >= 0:
        raise ValueError(f"{t!r} is not a time: give seconds (a number >= 0) or a string like \"30s\"")
    # Times past the end are capped there anyway; past 2^63 ns (292 years), cap here.
    return min(int(round(min(t, 1e19) * 1e9)), 2**63 - 1)


def run(scenario: Scenario, seed: Optional[int] = None) -> Result:
    """Runs ``scenario`` (with ``seed`` in place of its own, like ``cclab run --seed``)
    to its end and returns its :class:`Result`: the same files, byte for byte (but
    perf.json's wall-clock figures), as ``cclab run``. The GIL is released while it
    runs, and Ctrl-C (KeyboardInterrupt) stops it."""
    _check_scenario(scenario)
    # A copy: the caller's scenario may be changed afterwards, the result's must not.
    scn = scenario.with_seed(seed) if seed is not None else scenario.copy()
    tmp, out = new_folder()
    try:
        _cclab.run(scn._source(), out)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Result(out, scn, owned=tmp)


class Simulation:
    """A run advanced in steps, with parameters changed between them (TCPTuner-style):

    >>> sim = cclab.Simulation(scenario)
    >>> sim.run_until("30s")
    >>> sim.set_param(flow=1, name="beta", value=0.5)
    >>> sim.run_until("60s")
    >>> sim.samples()          # flows.csv so far, as a DataFrame

    A change applies after every event up to :attr:`now`; the same run is replayed by
    a ``[[changes]]`` entry at the instant :meth:`set_param` returns (now + 1 ns, or a
    little later when the scenario itself schedules something there), see
    :meth:`replay_scenario`. :meth:`finish` runs to the end and writes the results.
    """

    def __init__(self, scenario: Scenario, seed: Optional[int] = None) -> None:
        _check_scenario(scenario)
        self.scenario = scenario.with_seed(seed) if seed is not None else scenario.copy()
        self._tmp, self._out = new_folder()
        import shutil
        import weakref

        self._cleanup = weakref.finalize(self, shutil.rmtree, self._tmp, True)
        self._sim = _OneThread(_cclab.Simulation(self.scenario._source(), self._out))

    def run_until(self, t: Time) -> bool:
        """Runs every event up to ``t`` (capped at the end; "30s" or seconds); returns
        True when the run is over. A ``t`` before :attr:`now` raises ValueError (time only
        goes forward), as does a negative one; a ``t`` that is no str or real number
        TypeError. Releases the GIL; Ctrl-C interrupts between steps."""
        return self._sim.run_until(to_ns(t))

    @property
    def now(self) -> float:
        """Simulated time now, seconds."""
        return self._sim.now_ns / 1e9

    @property
    def now_ns(self) -> int:
        """Simulated time now, nanoseconds (exact)."""
        return self._sim.now_ns

    def set_param(self, flow: int, name: str, value: float) -> int:
        """Sets parameter ``name`` of flow ``flow`` (an algorithm's own parameter, or
        ``rto_min`` in ms / ``initcwnd``) to ``value`` now; returns the instant in ns of
        the ``[[changes]]`` entry that replays it. ``flow`` is the run's index, as
        ``scenario.flows`` lists them (with a ``[[flows]]`` entry switched off, not the
        file's number, which :meth:`replay_scenario` writes). A bad flow, name or value
        raises ValueError naming the field, the value and what is allowed; a name that
        is no str, or a value that is no number, TypeError."""
        n = len(self.scenario.flows)
        if not isinstance(name, str):
            raise TypeError(f"name = {name!r}: a parameter's name (a str such as \"beta\")")
        value = _plain(value)  # numpy's numbers and booleans as Python's
        if isinstance(flow, bool) or not isinstance(flow, numbers.Integral) or not 0 <= flow < n:
            raise ValueError(f"flow = {flow!r}: no such flow; this run has {n} (0 to {n - 1})")
        if not isinstance(value, numbers.Real):  # bool, int, float and numpy's numbers
            raise TypeError(
                f"{name} = {value!r}: the value must be a number "
                "(rto_min in milliseconds, initcwnd in segments, a switch as True/False)"
            )
        return self._sim.set_param(int(flow), name, float(value), isinstance(value, bool))

    @property
    def changes(self) -> List[Dict[str, Any]]:
        """The changes made so far: ``{"at_ns", "flow", "name", "value"}`` each."""
        return [
            {"at_ns": at, "flow": flow, "name": name, "value": value}
            for at, flow, name, value in self._sim.changes
        ]

    def replay_scenario(self) -> Scenario:
        """The scenario with every change so far appended as a ``[[changes]]`` entry:
        :func:`cclab.run` on it gives this run's results. A scenario whose whole
        ``changes`` was given by :meth:`Scenario.set` is refused (ValueError): that value
        would replace the appended entries."""
        s = self.scenario
        if any(_cclab.override_field(o) == "changes" for o in s.overrides):
            raise ValueError(
                "replay_scenario(): this scenario's changes were given by set(\"changes\", ...), "
                "which would replace the [[changes]] entries of the live changes; write the "
                "planned changes into the scenario (from_toml or from_dict) instead"
            )
        text = s._text.rstrip("\n") + "\n\n" + self._sim.changes_toml()
        return Scenario(text, s._file, s._base_dir, s._stem, s._overrides)

    def samples(self) -> pd.DataFrame:
        """flows.csv so far as a DataFrame (same columns and dtypes as ``Result.flows``)."""
        flows, _ = self._sim.series_files()
        return read_flows_csv(flows)

    def queue_samples(self) -> pd.DataFrame:
        """queue.csv so far as a DataFrame."""
        _, queue = self._sim.series_files()
        return read_queue_csv(queue)

    def finish(self) -> Result:
        """Runs to the end and returns the :class:`Result` (the results folder
        ``cclab run`` writes for :meth:`replay_scenario`). The simulation then ends. One
        difference: a stepped run's time series are always CSV, so that :meth:`samples`
        can read them while it runs, where ``cclab run`` writes Parquet beyond 2,000,000
        flow samples; ``Result.flows`` and ``Result.queue`` read either."""
        self.run_until(self._sim.end_ns / 1e9 + 1)
        self._sim.finish()
        result = Result(self._out, self.scenario)
        result._owner = self  # the folder lives as long as the result
        return result


class _OneThread:
    """The Rust simulation, whose use from a second thread while the first is in it
    (``run_until`` lets go of the GIL) is refused by PyO3 as "Already borrowed": said here
    in words that name the cause."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim

    def __getattr__(self, name: str) -> Any:
        try:
            attr = getattr(self._sim, name)
        except RuntimeError as e:
            raise _busy(e) from None
        if not callable(attr):
            return attr

        def call(*args: Any) -> Any:
            try:
                return attr(*args)
            except RuntimeError as e:
                raise _busy(e) from None

        return call


def _busy(e: RuntimeError) -> RuntimeError:
    if "borrow" not in str(e).lower():
        return e
    return RuntimeError(
        "this Simulation is in use by another thread (run_until runs without the GIL); "
        "use a Simulation from one thread at a time"
    )


def _check_scenario(scenario: Any) -> None:
    if not isinstance(scenario, Scenario):
        raise TypeError(
            f"expected a cclab.Scenario, not {type(scenario).__name__}: "
            "make one with cclab.Scenario.from_toml(path or text), from_dict(d) or default()"
        )
