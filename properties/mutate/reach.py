"""Which lines of the target each check reaches: traced once, unmutated.

`LineTracer` records every `(file, line)` executed in the watched files while it
is active (a `sys.settrace` hook that ignores frames of other files). A mutant
is reached by a check when its line ran under it; a mutant in module-level code
(run at import) by every check that ran anything of its module. A mutant no
check reaches is *unreached*: no history makes that line run, which is a
finding about the generators, not a kill.

>>> def f(x):
...     if x:
...         return 1
...     return 2
>>> with LineTracer({f.__code__.co_filename}) as tracer:
...     _ = f(0)
>>> first = f.__code__.co_firstlineno
>>> sorted(line - first for _, line in tracer.lines)
[0, 1, 3]
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from types import FrameType
from typing import Any

import attrs

from frontier_harness.properties.mutate.mutants import Mutant


class LineTracer:
    """A context manager recording `(file, line)` for every line run in `files`.

    A frame's file counts under the name `files` gives it: code imported through a symlink
    (`frontier_harness/spark_impl` links `spark_impl/`) is recorded at its real path when
    `files` names that one, as the loader compiles mutants there.
    """

    def __init__(self, files: Iterable[str]):
        self.files = frozenset(files)
        self.lines: set[tuple[str, int]] = set()
        self._previous: Any = None
        self._names: dict[str, str | None] = {}  # a code object's file -> its name in `files`, or None

    def __enter__(self) -> LineTracer:
        self._previous = sys.gettrace()
        sys.settrace(self._call)
        threading.settrace(self._call)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)
        threading.settrace(self._previous)

    def _name(self, filename: str) -> str | None:
        if filename not in self._names:
            real = os.path.realpath(filename)
            self._names[filename] = (
                filename if filename in self.files else real if real in self.files else None
            )
        return self._names[filename]

    def _call(self, frame: FrameType, event: str, arg: Any) -> Any:
        name = self._name(frame.f_code.co_filename)
        if name is None:
            return None
        self.lines.add((name, frame.f_lineno))
        return self._line

    def _line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines.add((self._names[frame.f_code.co_filename] or "", frame.f_lineno))
        return self._line


@attrs.frozen
class Reached:
    """The lines one check ran, and the files they are in."""

    lines: frozenset[tuple[str, int]]  # (file, line)
    files: frozenset[str]

    @classmethod
    def of(cls, lines: Iterable[tuple[str, int]]) -> Reached:
        lines = frozenset(lines)
        return cls(lines, frozenset(f for f, _ in lines))

    def reaches(self, mutant: Mutant, file: str) -> bool:
        """Whether the mutant's code ran under this check (`file`: the path its code objects carry)."""
        if not mutant.in_function:
            return file in self.files
        return (file, mutant.start_line) in self.lines or (file, mutant.line) in self.lines
