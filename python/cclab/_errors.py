"""The errors cclab raises."""

from typing import Optional


class ScenarioError(ValueError):
    """A scenario that cclab refuses, with the parts ``cclab run`` prints.

    ``str(error)`` is the CLI's message (after its ``error: `` prefix; a value given
    with ``Scenario.set`` is marked ``(Scenario.set)`` where the CLI says ``(--set)``),
    and the attributes are its parts:

    - ``file``: the file as named (``<string>`` for text, ``<dict>`` for a dict);
    - ``line``: the 1-based line of the bad key or value, or None (``Scenario.to_toml()``
      shows the lines of a scenario made from a dict);
    - ``from_override``: the value came from ``Scenario.set`` (the CLI's ``--set``);
    - ``field``: the field path, such as ``flows[1].rtt`` ("" for whole-file problems);
    - ``value``: the bad value as written, or None;
    - ``message``: what is wrong and what is allowed.
    """

    def __init__(
        self,
        text: str,
        file: str,
        line: Optional[int],
        from_override: bool,
        field: str,
        value: Optional[str],
        message: str,
    ) -> None:
        super().__init__(text)
        self.file = file
        self.line = line
        self.from_override = from_override
        self.field = field
        self.value = value
        self.message = message

    def __reduce__(self):  # type: ignore[override]
        # Pickled whole (a Ray worker's or a process pool's error reaches the caller so),
        # with its attributes as state: add_note's hints live in __notes__.
        parts = (self.file, self.line, self.from_override, self.field, self.value, self.message)
        return (type(self), (str(self), *parts), self.__dict__)


class RunError(RuntimeError):
    """A run that could not be done or written (for example a results folder that
    exists and is not a cclab results folder), with the CLI's message."""
