"""The first answer first: under `--fail-fast`, one flag (`Stop`) shared by every lane of a run, set by
the first failing trial of any property, and read by every other lane between its trials and between its
histories, which then ends (`Stopped`) and is reported "stopped (fail-fast)", never "held".

The flag is a value in the open: the runner's request carries it (`SuiteRequest.stop`) and each run of a
property reads it (`Run.check`); a second process gets the same flag as a `multiprocessing` event. The
lane whose failure set it is not stopped by it: it shrinks its failure to the end.

>>> stop = Stop()
>>> stop.stops("laws.join[total]")
False
>>> stop.set("laws.meet[total]")
>>> stop.stops("laws.join[total]"), stop.stops("laws.meet[total]")
(True, False)
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

STOPPED = "stopped (fail-fast)"


class Stopped(BaseException):
    """A lane ended by the run's `Stop`: a `BaseException`, so that no check, bisection or Hypothesis
    lane takes it for the implementation's failure; the search catches it and reports what had run."""


@attrs.frozen
class Stop:
    """Set once a failure is found; `event` is a `threading.Event`, or a `multiprocessing` event shared with
    a second process; `first` names the runs of this process whose failure set it (they go on)."""

    event: Any = attrs.field(factory=threading.Event)
    first: list[str] = attrs.field(factory=list, eq=False)

    def set(self, label: str) -> None:
        """`label`'s failure was found: every other lane stops."""
        self.first.append(label)
        self.event.set()

    def stops(self, label: str) -> bool:
        """Whether the run `label` must end now: the flag is set by another run's failure."""
        return self.event.is_set() and label not in self.first

    @property
    def is_set(self) -> bool:
        return bool(self.event.is_set())
