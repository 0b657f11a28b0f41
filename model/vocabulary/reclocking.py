"""Words of the reclocking capability's suites: reclock histories, restart histories and their summaries.

A *reclock* history (suites `reclock`, `remap`) mints remap bindings (`upper`
observed at `tick`), adds source `update`s (`data`, `time`, `diff`), compacts the
remap `to` an IntoTime, and observes it: `read` a `tick` (`(step, REMAP_AT)`),
`invert` at a `tick` or `closed` (`(step, INVERTED)`), `reclock` (`(step, RECLOCKED)`
and `(step, PENDING)`); at its end (`len(actions)`) the reclocked and pending updates
and the final `BINDINGS`.

A *restart* history (suites `restart`, `summary`) mints, adds source records (an
`update`, or a `data` record `{txn, payload, time}` and a `txn` metadata record
`{txn, size, time}`) and ends with a `crash` at a `tick`. Its observations, all at
`len(actions)`, are the remap's `STEPS` and each summarizer's output and temp, of the
run and of the restart (`summary_label`); a temp row's kind is the record's action
name (`DATA`, `TXN`).

>>> ReclockAction("invert") is ReclockAction.INVERT
True
>>> sorted(RestartAction)
['crash', 'data', 'mint', 'txn', 'update']
>>> summary_label(SummaryRun.RESTARTED, Summarizer.UNORDERED, SummaryPart.TEMP)
'restarted unordered temp'
>>> summary_label(SummaryRun.RUN, "independent", "output") is SummaryLabel.INDEPENDENT_OUTPUT
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from frontier_harness.model.vocabulary import Arg, Decoder, HistoryLike, Word, decoded


class ReclockAction(Word):
    """A step of a reclock history: `mint(upper, tick)`, `update(data, time, diff)`, `compact(to)`,
    and the observations `read(tick)`, `invert(tick | closed)`, `reclock()`."""

    MINT = "mint"
    UPDATE = "update"
    COMPACT = "compact"
    READ = "read"
    INVERT = "invert"
    RECLOCK = "reclock"


# The reclock actions that observe the remap (a point) rather than change it.
OBSERVING = (ReclockAction.READ, ReclockAction.INVERT, ReclockAction.RECLOCK)


class RestartAction(Word):
    """A step of a restart history: `mint`, a source record (`update`, `data`, `txn`), and `crash(tick)`."""

    MINT = "mint"
    UPDATE = "update"
    DATA = "data"
    TXN = "txn"
    CRASH = "crash"


class ReclockArg(Word):
    """The capability's own argument keys (besides `Arg`'s `upper`, `data`, `time`, `diff`): an IntoTime
    `tick`, a compaction's `to`, an inversion at the `closed` frontier, a transaction's `txn`, a data
    record's `payload`, a metadata record's `size`."""

    TICK = "tick"
    TO = "to"
    CLOSED = "closed"
    TXN = "txn"
    PAYLOAD = "payload"
    SIZE = "size"


class ReclockLabel(Word):
    """What a reclock observation's `(step, label)` key holds: `R(tick)`, an inversion, the reclocked and
    pending updates, and (at the end) the remap's bindings."""

    REMAP_AT = "remap_at"
    INVERTED = "inverted"
    RECLOCKED = "reclocked"
    PENDING = "pending"
    BINDINGS = "bindings"


class Summarizer(Word):
    """The summarizers of practical reclocking: `independent` updates; `ordered` and `unordered` transactions."""

    INDEPENDENT = "independent"
    ORDERED = "ordered"
    UNORDERED = "unordered"


class SummaryRun(Word):
    """Which run a summary is of: the uninterrupted `run`, or the one `restarted` from the crash tick."""

    RUN = "run"
    RESTARTED = "restarted"


class SummaryPart(Word):
    """A summary's two collections: the published `output` and the auxiliary `temp` records."""

    OUTPUT = "output"
    TEMP = "temp"


class SummaryLabel(Word):
    """What a summary observation's `(len(actions), label)` key holds: the remap's `steps`, or one
    run's summarizer's output or temp at every step (`summary_label` names them)."""

    STEPS = "steps"
    INDEPENDENT_OUTPUT = "independent output"
    INDEPENDENT_TEMP = "independent temp"
    ORDERED_OUTPUT = "ordered output"
    ORDERED_TEMP = "ordered temp"
    UNORDERED_OUTPUT = "unordered output"
    UNORDERED_TEMP = "unordered temp"
    RESTARTED_INDEPENDENT_OUTPUT = "restarted independent output"
    RESTARTED_INDEPENDENT_TEMP = "restarted independent temp"
    RESTARTED_ORDERED_OUTPUT = "restarted ordered output"
    RESTARTED_ORDERED_TEMP = "restarted ordered temp"
    RESTARTED_UNORDERED_OUTPUT = "restarted unordered output"
    RESTARTED_UNORDERED_TEMP = "restarted unordered temp"


def summary_label(run: str, summarizer: str, part: str) -> SummaryLabel:
    """The label of `run`'s (`SummaryRun`) `summarizer`'s `part`; `ValueError` names a word that is none."""
    prefix = "" if SummaryRun(run) == SummaryRun.RUN else f"{SummaryRun.RESTARTED} "
    return SummaryLabel(f"{prefix}{Summarizer(summarizer)} {SummaryPart(part)}")


@attrs.frozen
class Mint:
    """`mint(upper, tick)`: the source's upper (a frontier of FromTimes) observed at IntoTime `tick`."""

    step: int
    upper: tuple
    tick: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> Mint:
        return cls(step, tuple(args[Arg.UPPER]), args[ReclockArg.TICK])


@attrs.frozen
class SourceUpdate:
    """`update(data, time, diff)`: an update of the source collection, at a FromTime."""

    step: int
    data: Any
    time: Any
    diff: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> SourceUpdate:
        return cls(step, args[Arg.DATA], args[Arg.TIME], args[Arg.DIFF])


@attrs.frozen
class Compact:
    """`compact(to)`: the remap's since advanced to IntoTime `to`."""

    step: int
    to: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> Compact:
        return cls(step, args[ReclockArg.TO])


@attrs.frozen
class Observe:
    """An observing action (`OBSERVING`): `read(tick)`, `invert(tick | closed)` or `reclock()`."""

    step: int
    kind: ReclockAction
    tick: int | None = None
    closed: bool = False

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any], kind: ReclockAction) -> Observe:
        """A `read` names its tick, an `invert` its tick unless `closed`; a `reclock` names neither."""
        closed = bool(args.get(ReclockArg.CLOSED, False))
        if kind is ReclockAction.RECLOCK or closed:
            return cls(step, kind, args.get(ReclockArg.TICK), closed)
        return cls(step, kind, args[ReclockArg.TICK])


ReclockStep = Mint | SourceUpdate | Compact | Observe


def reclock_steps(history: HistoryLike) -> tuple[ReclockStep, ...]:
    """A reclock history's actions, decoded (`MalformedHistory` for one it does not name).

    >>> from types import SimpleNamespace as A
    >>> reclock_steps(A(domain="total", actions=[A(name="mint", args={"upper": [2], "tick": 1}),
    ...                                          A(name="invert", args={"closed": True})]))
    (Mint(step=0, upper=(2,), tick=1), Observe(step=1, kind='invert', tick=None, closed=True))
    """
    return decoded("reclock", history, RECLOCK_DECODERS)


def _observe(kind: ReclockAction) -> Decoder[ReclockStep]:
    return lambda step, args: Observe.of(step, args, kind)


RECLOCK_DECODERS: dict[str, Decoder[ReclockStep]] = {
    ReclockAction.MINT: Mint.of,
    ReclockAction.UPDATE: SourceUpdate.of,
    ReclockAction.COMPACT: Compact.of,
    **{kind: _observe(kind) for kind in OBSERVING},
}


@attrs.frozen
class TxnData:
    """`data(txn, payload, time)`: a transaction's data record, at its (data, metadata) FromTime pair."""

    step: int
    txn: str
    payload: Any
    time: Any

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> TxnData:
        return cls(step, args[ReclockArg.TXN], args[ReclockArg.PAYLOAD], args[Arg.TIME])


@attrs.frozen
class TxnMetadata:
    """`txn(txn, size, time)`: a transaction's metadata record: how many data records it has."""

    step: int
    txn: str
    size: int
    time: Any

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> TxnMetadata:
        return cls(step, args[ReclockArg.TXN], args[ReclockArg.SIZE], args[Arg.TIME])


@attrs.frozen
class Crash:
    """`crash(tick)`: the run dies at IntoTime `tick` and restarts from `R(tick)`."""

    step: int
    tick: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> Crash:
        return cls(step, args[ReclockArg.TICK])


SourceRecord = SourceUpdate | TxnData | TxnMetadata
RestartStep = Mint | SourceRecord | Crash


def restart_steps(history: HistoryLike) -> tuple[RestartStep, ...]:
    """A restart history's actions, decoded (`MalformedHistory` for one it does not name).

    >>> from types import SimpleNamespace as A
    >>> restart_steps(A(domain="total", actions=[A(name="crash", args={"tick": 4})]))
    (Crash(step=0, tick=4),)
    """
    return decoded("restart", history, RESTART_DECODERS)


RESTART_DECODERS: dict[str, Decoder[RestartStep]] = {
    RestartAction.MINT: Mint.of,
    RestartAction.UPDATE: SourceUpdate.of,
    RestartAction.DATA: TxnData.of,
    RestartAction.TXN: TxnMetadata.of,
    RestartAction.CRASH: Crash.of,
}
