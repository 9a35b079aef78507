"""Scenarios: read from a TOML file or text, or a dict; changed with the ``--set`` rules."""

import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _cclab
from ._errors import ScenarioError


# Deeper than the writer's own limit (64), so that it, not this, refuses such a value.
_MAX_DEPTH = 70


def _within(field: str, changed: str) -> bool:
    """Whether ``field`` is ``changed`` or lies inside it (``flows[0].params.beta`` inside
    ``flows[0]``): an error there was made by the change itself."""
    return field == changed or field.startswith((changed + ".", changed + "["))


def _add_note(error: Exception, note: str) -> None:
    """``error.add_note(note)``; before Python 3.11, which has no notes, the note is added
    to the message on a line of its own, which is where 3.11 prints it."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    elif error.args:
        error.args = (f"{error.args[0]}\n{note}", *error.args[1:])


def _plain(v: Any, depth: int = 0) -> Any:
    """``v`` with the values a notebook computes made Python's own: numpy's and other
    libraries' integers, reals and booleans (``np.int64(3)``, ``np.bool_(False)``) become
    int, float and bool, and a sequence that is not a str (a tuple, a ``range``, a numpy
    array, a pandas Series) a list, inside dicts and lists too. Anything else (a set,
    whose order is not fixed, an object), and what is nested deeper than a scenario can
    be, is left as it is for the writer to refuse by name."""
    if isinstance(v, (str, bool, int, float)) or v is None or depth > _MAX_DEPTH:
        return v
    if isinstance(v, Mapping):
        return {k: _plain(x, depth + 1) for k, x in v.items()}
    if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
        return _plain(v.item(), depth + 1)  # a numpy scalar or 0-d array (np.bool_ too)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, Iterable) and not isinstance(v, (bytes, bytearray, set, frozenset)):
        return [_plain(x, depth + 1) for x in v]
    return v

Source = Tuple[str, str, Optional[str], str, List[str]]

# set()'s value when it is given a dict of changes instead of one field.
_UNSET: Any = object()


class Scenario:
    """A checked cclab scenario (the TOML schema of the README's "Scenario files").

    Make one with :meth:`from_toml`, :meth:`from_dict` or :meth:`default`; change it with
    :meth:`set`. It is checked on every change by the same code as ``cclab run``: a bad
    one raises :class:`cclab.ScenarioError`. A scenario with a ``[sweep]`` table is run
    with :func:`cclab.sweep`.

    Relative trace paths are resolved against the file's folder (for text or a dict:
    ``base_dir``, default the current folder).
    """

    def __init__(
        self,
        text: str,
        file: str,
        base_dir: Optional[str],
        stem: str,
        overrides: Optional[List[str]] = None,
    ) -> None:
        self._text = text
        self._file = file
        self._base_dir = base_dir
        self._stem = stem
        self._overrides = list(overrides or [])
        self._info: Dict[str, Any] = _cclab.check(self._source())

    @classmethod
    def from_toml(
        cls, path_or_text: Union[str, "os.PathLike[str]"], base_dir: Optional[str] = None
    ) -> "Scenario":
        """A scenario file (a path, or a string naming an existing file or ending in
        ``.toml``), or TOML text (any other string; errors name it ``<string>``). A
        one-line string with no ``=`` cannot be a scenario's text, so it is taken as a
        path too, and a missing file or a folder is refused as ``cclab run`` refuses it."""
        if not isinstance(path_or_text, (str, os.PathLike)):
            raise TypeError(
                f"from_toml takes a path or TOML text (str), not {type(path_or_text).__name__}"
            )
        if _is_path(path_or_text):
            text, file, folder, stem = _cclab.read_file(os.fspath(path_or_text))
            # Absolute, as for text and dicts: trace paths still resolve after os.chdir.
            return cls(text, file, os.path.abspath(folder) if folder is not None else None, stem)
        return cls(str(path_or_text), "<string>", base_dir or os.getcwd(), "scenario")

    @classmethod
    def from_dict(cls, d: Dict[str, Any], base_dir: Optional[str] = None) -> "Scenario":
        """A scenario from a dict shaped like the TOML file (``{"duration": "30s",
        "bottleneck": {...}, "flows": [{...}]}``); None values are left out. Errors name
        the file ``<dict>`` and the lines of :meth:`to_toml`."""
        if not isinstance(d, Mapping):
            raise TypeError(f"from_dict takes a dict shaped like the scenario file, not {type(d).__name__}")
        return cls(_cclab.toml_document(_plain(d)), "<dict>", base_dir or os.getcwd(), "scenario")

    @classmethod
    def default(cls) -> "Scenario":
        """The built-in default scenario (``cclab run`` without a file)."""
        text, file, stem = _cclab.default_source()
        return cls(text, file, None, stem)

    def set(self, field: Union[str, Mapping[str, Any]], value: Any = _UNSET) -> "Scenario":
        """Changes one field as ``cclab run --set FIELD=VALUE`` does and returns this
        scenario. A str is read as ``--set`` reads it (TOML if it is valid TOML, else a
        string, so ``"20Mbps"`` needs no quotes; one that opens a table, a list or a
        quoted string must be whole TOML, so ``'"[bulk]"'``); other values (int, float, bool, list,
        dict) are written as TOML. ``set({FIELD: VALUE, ...})`` changes several fields
        at once, as several ``--set`` flags do, and checks the scenario once after all
        of them: fields that constrain each other (a flow's RTT and the bottleneck's
        delay) are changed together that way. On error the scenario is unchanged."""
        if isinstance(field, Mapping) and value is _UNSET:
            changes = list(field.items())
        elif value is _UNSET:
            raise TypeError("set() takes a field and its value, or one dict of field -> value")
        else:
            changes = [(field, value)]
        overrides = list(self._overrides)
        for f, v in changes:
            if not isinstance(f, str):
                raise TypeError(f"field must be a str such as \"flows[0].rtt\", not {type(f).__name__}")
            if not f.strip():
                raise ValueError(f"field {f!r}: expected a field path such as \"flows[0].rtt\"")
            if _cclab.override_field(f"{f}=") != f.strip():  # the CLI's FIELD=VALUE split
                raise ValueError(f"field {f!r}: a field path has no \"=\"; give the value apart: set(\"flows[0].cc\", \"reno\")")
            try:
                text = v if isinstance(v, str) else _cclab.toml_value(_plain(v))
            except (TypeError, ValueError) as e:
                raise type(e)(f"{f}: {e}") from None  # the value's own error names no field
            overrides.append(f"{f}={text}")
        try:
            info = _cclab.check((self._text, self._file, self._base_dir, self._stem, overrides))
        except ScenarioError as e:
            if len(changes) == 1 and e.field and not _within(e.field, changes[0][0]):
                _add_note(
                    e,
                    f"set() checks the scenario after each call, and {e.field} was not changed "
                    f"by this one; to change fields that depend on each other, give them in one "
                    f"call: set({{{changes[0][0]!r}: ..., {e.field!r}: ...}})",
                )
            raise
        self._overrides, self._info = overrides, info
        return self

    def copy(self) -> "Scenario":
        """An independent copy (:meth:`set` changes the scenario it is called on)."""
        return Scenario(self._text, self._file, self._base_dir, self._stem, self._overrides)

    def to_toml(self) -> str:
        """The scenario's text as read or made (changes by :meth:`set` are kept apart, in
        :attr:`overrides`, as ``--set`` keeps them apart from the file). When there are
        such changes, a warning says that the text lacks them: a file written from it
        runs without them unless they are given again (``cclab run FILE --set ...``)."""
        if self._overrides:
            warnings.warn(
                f"to_toml() returns the text without the {len(self._overrides)} change(s) "
                f"made by set(): {', '.join(self._overrides)}; give them again as "
                "`cclab run FILE --set FIELD=VALUE` (or set() after from_toml)",
                stacklevel=2,
            )
        return self._text

    @property
    def overrides(self) -> List[str]:
        """The ``FIELD=VALUE`` changes made by :meth:`set`, in order."""
        return list(self._overrides)

    @property
    def file(self) -> str:
        """The file as errors name it: its path, ``<string>`` for text, ``<dict>``."""
        return self._file

    @property
    def name(self) -> str:
        """The name (the file's ``name``, else its stem): results folders are named so."""
        return str(self._info.get("name", self._stem))

    @property
    def seed(self) -> Optional[int]:
        """The run's seed (the file's, or the last :meth:`set` or :meth:`with_seed`)."""
        return self._info.get("seed")

    @property
    def duration(self) -> float:
        """The run's length in seconds."""
        return self._info.get("duration_ns", 0) / 1e9

    @property
    def sample_interval(self) -> float:
        """Seconds between time-series samples."""
        return self._info.get("sample_interval_ns", 0) / 1e9

    @property
    def flows(self) -> List[Tuple[str, str]]:
        """Each flow's (name, algorithm), in order (of a sweep's first run)."""
        return [tuple(f) for f in self._info.get("flows", [])]  # type: ignore[misc]

    @property
    def is_sweep(self) -> bool:
        """Whether the scenario has a ``[sweep]`` table."""
        return bool(self._info["sweep"])

    def with_sweep(self, grid: Dict[str, List[Any]], seeds: Optional[int] = None) -> "Scenario":
        """A copy with a ``[sweep]`` table: each key of ``grid`` a field path as
        :meth:`set` takes it (several fields separated by commas move together), each
        value its list of values; ``seeds`` repeats each point with seeds ``seed``,
        ``seed+1``, ... (README, "Sweeps")."""
        if not isinstance(grid, Mapping):
            raise TypeError(f"grid must be a dict of field -> list of values, not {type(grid).__name__}")
        if self.is_sweep:
            raise ValueError(f"{self._file} already has a [sweep] table; pass no grid, or replace "
                             "that table with yours: scenario.set(\"sweep\", {field: [values], "
                             "..., \"seeds\": N})")
        if not grid and seeds is None:
            raise ValueError("the grid is empty: give at least one field with its list of values "
                             "(or seeds=N); cclab.run(scenario) runs the scenario once")
        if any(_cclab.override_field(o) == "sweep" for o in self._overrides):
            # Its [sweep] was removed by set("sweep", {}); a grid added after that change
            # would be removed by it again.
            raise ValueError("this scenario's [sweep] was changed with set(\"sweep\", ...); make "
                             "the grid from the scenario before that change, or give the grid "
                             "in that change: set(\"sweep\", {field: [values], ..., \"seeds\": N})")
        lines = ["", "[sweep]"]
        for key, values in grid.items():
            values = _plain(values)
            if not isinstance(values, list):
                raise TypeError(f"grid[{key!r}] must be a list of values, not {type(values).__name__}")
            try:
                lines.append(f"{_cclab.toml_value(key)} = {_cclab.toml_value(values)}")
            except (TypeError, ValueError) as e:
                raise type(e)(f"grid[{key!r}]: {e}") from None
        if seeds is not None:
            try:
                lines.append(f"seeds = {_cclab.toml_value(_plain(seeds))}")
            except (TypeError, ValueError) as e:
                raise type(e)(f"seeds: {e}") from None
        base = self._text.rstrip("\n") + "\n"
        try:
            return Scenario(base + "\n".join(lines) + "\n", self._file, self._base_dir, self._stem, self._overrides)
        except ScenarioError as e:
            # The [sweep] table is ours, not a line of the user's file: name the grid.
            if e.line is None or e.line <= base.count("\n"):
                raise
            what = " = ".join(p for p in (e.field, e.value) if p)
            # seeds= is an argument of its own, not part of the grid.
            where = "seeds" if e.field == "sweep.seeds" else "grid"
            raise ScenarioError(
                f"{where}: {what}: {e.message}", f"<{where}>", None, False, e.field, e.value, e.message
            ) from None

    def with_seed(self, seed: int) -> "Scenario":
        """A copy with another seed (``cclab run --seed``: applied after every change)."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"seed = {seed!r}: must be an integer (0 to 2^63 - 1), not {type(seed).__name__}")
        if not 0 <= seed < 2**63:
            raise ValueError(f"seed = {seed}: out of range; allowed: 0 to 2^63 - 1")
        return self.copy().set("seed", int(seed))

    def _source(self) -> Source:
        return (self._text, self._file, self._base_dir, self._stem, list(self._overrides))

    def __repr__(self) -> str:
        flows = ", ".join(f"{n}:{cc}" for n, cc in self.flows)
        kind = f"sweep of {self._info['runs']} runs, " if self.is_sweep else ""
        return f"<cclab.Scenario {self.name!r} ({kind}{self.duration:g} s; {flows})>"


def _is_path(x: Any) -> bool:
    if isinstance(x, os.PathLike):
        return True
    if not isinstance(x, str) or "\n" in x:
        return False
    return x.endswith(".toml") or os.path.exists(x) or (x.strip() != "" and "=" not in x)
