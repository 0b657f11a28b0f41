"""What `check` shows while a suite runs against one implementation (a pairing).

On a terminal, a live display of two rows: the pairing (`SUITE against IMPL`, the
properties and domains done of how many it runs, and an ETA) and the property and
domain running (`SUITE.PROPERTY [DOMAIN] LANE`, histories done of the total, the
rate and an ETA); a suite that reports its histories one by one (the streaming
suite, each a real query) shows the last trial's number and verdict beside it.
Piped (a CI log): a line per property and domain the moment it ends, and a line
per failing trial the moment it is seen. The runner knows nothing of this: it hands over `Tick`s and results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import attrs
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from frontier_harness.properties.engine.results import PropertyResult
from frontier_harness.properties.engine.run import Tick
from frontier_harness.properties.engine.verdict import Verdict

NOTE_WIDTH = 60  # a failed trial's message, cut to this on the terminal


@attrs.frozen
class Hooks:
    """What the runner calls: `progress` with each `Tick`, `finished` with each property's result."""

    progress: Callable[[Tick], None]
    finished: Callable[[PropertyResult], None]


@contextmanager
def pairing_display(out: Console, suite: str, impl_name: str) -> Iterator[Hooks]:
    """The live display on a terminal (gone when the pairing ends), else printed lines."""
    if not out.is_terminal:
        yield Hooks(trial_line(out, impl_name), finished_line(out, impl_name))
        return
    with _progress_bars(out) as bars:
        yield _Terminal(bars, suite, impl_name).hooks()


def _progress_bars(out: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        _Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}", markup=False),
        console=out,
        transient=True,
    )


class _Rate(ProgressColumn):
    """Histories (or properties and domains) a second, over rich's recent window."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        shown = "" if not speed else f"{speed:,.0f}/s" if speed >= 10 else f"{speed:.1f}/s"
        return Text(shown, justify="right")


class _Terminal:
    """The two rows of one pairing, moved by the runner's ticks."""

    def __init__(self, bars: Progress, suite: str, impl_name: str):
        self.bars = bars
        self.pairing = bars.add_task(
            f"{suite} against {impl_name}", total=None, unit="properties·domains", note=""
        )
        self.current = bars.add_task("starting", total=None, unit="histories", note="")
        self.running: tuple[str, str, str] | None = None
        self.failed = 0

    def hooks(self) -> Hooks:
        return Hooks(self.progress, self.finished)

    def progress(self, tick: Tick) -> None:
        if self.running != (tick.property, tick.domain, tick.lane):
            self._start(tick)
        self.bars.update(self.current, total=tick.total, completed=tick.done)
        if tick.trial is not None:
            note = f"{trial_number(tick)}: {tick.trial}"
            self.bars.update(self.current, note=_first_line(note, NOTE_WIDTH))

    def _start(self, tick: Tick) -> None:
        """A new property and domain, or its next lane: the row starts afresh (the rate is the lane's own)."""
        same = self.running is not None and self.running[:2] == (tick.property, tick.domain)
        self.running = (tick.property, tick.domain, tick.lane)
        description = f"{tick.suite}.{tick.property} [{tick.domain}] {tick.lane}"
        self.bars.reset(self.current, total=tick.total, completed=tick.done, description=description)
        if not same:
            self.bars.update(self.current, note="")  # the last trial shown was another property's
        self.bars.update(self.pairing, total=tick.place[1], completed=tick.place[0] - 1)

    def finished(self, result: PropertyResult) -> None:
        self.failed += result.verdict is Verdict.FAILED
        note = f"{self.failed} failed" if self.failed else ""
        self.bars.update(self.pairing, advance=1, note=note)
        self.bars.refresh()  # each property and domain is seen at its end, however quick it was


def trial_number(tick: Tick) -> str:
    """`trial 3 of 12`, or `trial 14 (shrinking)` once a failure is being shrunk (or a batch bisected)."""
    return f"trial {tick.done} " + ("(shrinking)" if tick.shrinking else f"of {tick.total}")


def _first_line(text: str | None, width: int | None = None) -> str:
    line = text.splitlines()[0] if text else ""
    return line if width is None or len(line) <= width else line[: width - 1] + "…"


def trial_line(out: Console, impl_name: str) -> Callable[[Tick], None]:
    """Piped output: a line per failing trial, the moment it is seen (`Tick.trial`); a trial that held and
    other ticks print nothing: a CI log gets a line per property and domain (`finished_line`), not one per
    trial."""

    def progress(tick: Tick) -> None:
        if tick.trial is not None and tick.trial != Verdict.HELD:
            where = f"{tick.suite}.{tick.property} [{tick.domain}] {trial_number(tick)}"
            out.print(f"{where} against {impl_name}: {_first_line(tick.trial)}", markup=False)

    return progress


def finished_line(out: Console, impl_name: str) -> Callable[[PropertyResult], None]:
    """Piped output (a CI log): one line per property and domain the moment it ends."""

    def finished(r: PropertyResult) -> None:
        verdict = (
            "FAILED"
            if r.verdict is Verdict.FAILED
            else str(r.verdict) + (f": {r.reason}" if r.reason else "")
        )
        out.print(
            f"{r.suite}.{r.property} [{r.domain}] against {impl_name}: {r.examples} {r.unit} in "
            f"{r.seconds:.1f}s, {verdict}",
            markup=False,
            soft_wrap=True,  # a CI log's line is grepped whole
        )

    return finished
