"""Histories for the TTL store: store histories, compaction inputs, and codec inputs.

Store history (suite `ttl`), plain data, first action `open` (optional: the defaults):

- `open(default_ttl?, interval?)` store options (the user clock starts at 0 ms)
- `put(key, value, ttl?, expire_at?)`, `delete(key)` writes (`expire_at` may lie
  in the past, or at an i64 limit); `tick(ms)` moves the user clock forward, `set_clock(ms)` sets it
  (possibly backwards)
- `flush`, `compact(start, length)` (the span of sources from index `start %
  len(sources)`, `length` more, widened to every older L0 SST), `periodic`,
  `crash(ms?)` (lose the memtable, the user clock set to `ms` while the store is
  down, reopen from the manifest and the WAL)

Random blocks alone rarely reach the hard cases, so blocks are mixed with
scenarios that aim at them: an expired newer version over an older one in a
lower run then a non-last-run compaction, a tombstone over a lower run, a read
exactly at `expire_ts`, a crash with unflushed writes then a clock set back, a
read that sees a row expire then a crash with the clock set back below it, and
(with an interval) a quiet store: a flush, the clock moving on (sometimes by
exactly the interval, where the SST is not yet due), periodic compaction.

Compaction input (suite `ttl_compaction`): `row(run, key, value?, seq, create,
expire)` actions (run 0 is the newest) then `compact(now, last)` actions.
Codec input (suite `ttl_codec`): `row(key, value?, seq, create?, expire)` with
hex keys and values (a v1 SST's rows all with a `create`, or all without: no
TIMESTAMP feature), one `encode(version, created)`, then `corrupt(offset, xor)`
or `truncate(length)` actions applied, each alone, to the encoded bytes.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_ttl_history(RandomSource(1), "total")
>>> h.actions[0].name
'open'
"""

from __future__ import annotations

from typing import Any

from frontier_harness.model.vocabulary.ttl import (
    STORE_KEYS,
    CodecAction,
    CodecArg,
    CompactionAction,
    CompactionArg,
    RowArg,
    StoreAction,
    StoreArg,
)
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

KEYS = STORE_KEYS
VALUES = ("x", "y", "z")
I64_MAX, I64_MIN = 2**63 - 1, -(2**63)
NEVER = I64_MAX
ALL: dict[str, Any] = {StoreArg.START: 0, StoreArg.LENGTH: 99}
NEWEST: dict[str, Any] = {StoreArg.START: 0, StoreArg.LENGTH: 0}


class _Clock:
    """The generator's idea of the user clock, so `expire_at` and `set_clock` land near it."""

    def __init__(self) -> None:
        self.ms = 0

    def tick(self, ms: int) -> Action:
        self.ms += ms
        return Action(StoreAction.TICK, {StoreArg.MS: ms})

    def set(self, ms: int) -> Action:
        self.ms = ms
        return Action(StoreAction.SET_CLOCK, {StoreArg.MS: ms})

    def crash(self, back: int) -> Action:
        """A crash; while the store is down the user clock goes `back` ms back (not below 0)."""
        self.ms = max(0, self.ms - back)
        return Action(StoreAction.CRASH, {StoreArg.MS: self.ms})


def _put(key: str, value: str, ttl: int | None = None, expire_at: int | None = None) -> Action:
    args: dict[str, object] = {StoreArg.KEY: key, StoreArg.VALUE: value}
    if ttl is not None:
        args[StoreArg.TTL] = ttl
    if expire_at is not None:
        args[StoreArg.EXPIRE_AT] = expire_at
    return Action(StoreAction.PUT, args)


def draw_write(source: Source, clock: _Clock) -> Action:
    """A put (with no, a small, a huge or an absolute TTL, maybe past), a delete, or a clock move."""
    kind = source.integer(0, 9)
    key = source.choice(KEYS)
    if kind < 5:
        ttl = source.choice((None, 1, 2, 3, None, I64_MAX, 0))
        return _put(key, source.choice(VALUES), ttl=ttl)
    if kind == 5:
        at = clock.ms + source.integer(-2, 3)
        if source.integer(0, 7) == 7:  # the i64 limits: never, and the furthest past
            at = source.choice((I64_MAX, I64_MIN))
        return _put(key, source.choice(VALUES), expire_at=at)
    if kind == 6:
        return Action(StoreAction.DELETE, {StoreArg.KEY: key})
    if kind < 9:
        return clock.tick(source.integer(0, 3))
    return clock.set(max(0, clock.ms - source.integer(1, 3)))


def draw_end(source: Source, clock: _Clock) -> list[Action]:
    """What ends a block of writes: nothing, a flush, a compaction, periodic compaction, a crash."""
    kind = source.integer(0, 6)
    span: dict[str, Any] = {StoreArg.START: source.integer(0, 3), StoreArg.LENGTH: source.integer(0, 3)}
    compact = Action(StoreAction.COMPACT, span)
    return [
        [],
        [Action(StoreAction.FLUSH)],
        [Action(StoreAction.FLUSH), compact],
        [compact],
        [Action(StoreAction.PERIODIC)],
        [Action(StoreAction.CRASH)],
        [clock.crash(source.integer(1, 2))],
    ][kind]


def draw_scenario(source: Source, clock: _Clock, interval: int | None) -> list[Action]:
    """One of the hard cases, with its key, TTL and delays drawn (so it still shrinks)."""
    key = source.choice(KEYS)
    other = source.choice(tuple(k for k in KEYS if k != key))
    kind = source.integer(0, 5)
    if kind == 5 and interval is not None:  # a quiet store: no write after the flush, the clock moves on
        ttl = source.integer(1, 3)
        delay = interval + ttl + source.integer(1, 3)
        return [
            _put(key, source.choice(VALUES), ttl=ttl),
            Action(StoreAction.FLUSH),
            clock.tick(interval if source.integer(0, 3) == 3 else delay),  # exactly the interval: not due
            Action(StoreAction.PERIODIC),
        ]
    if kind >= 4:  # a read sees a row expire; the clock restarts after its write, before its expiry
        ttl = source.integer(1, 3)
        late = source.integer(0, 2)
        return [_put(key, source.choice(VALUES), ttl=ttl), clock.tick(ttl + late), clock.crash(late + 1)]
    if kind == 0:  # an expired newer version over an older one in a lower run, then a non-last-run compaction
        ttl = source.integer(1, 3)
        return [
            _put(key, "old"),
            Action(StoreAction.FLUSH),
            Action(StoreAction.COMPACT, ALL),
            _put(key, "new", ttl=ttl),
            Action(StoreAction.FLUSH),
            clock.tick(ttl + source.integer(0, 1)),
            _put(other, source.choice(VALUES)),
            Action(StoreAction.FLUSH),
            Action(StoreAction.COMPACT, NEWEST),
        ]
    if kind == 1:  # a tombstone over an older version in a lower run
        return [
            _put(key, "old"),
            Action(StoreAction.FLUSH),
            Action(StoreAction.COMPACT, ALL),
            Action(StoreAction.DELETE, {StoreArg.KEY: key}),
            Action(StoreAction.FLUSH),
            Action(StoreAction.COMPACT, NEWEST),
        ]
    if kind == 2:  # a read exactly at expire_ts
        ttl = source.integer(1, 3)
        return [_put(key, source.choice(VALUES), ttl=ttl), clock.tick(ttl)]
    # a crash with unflushed writes, the user clock set back below them while the store is down
    return [
        _put(key, "old"),
        Action(StoreAction.FLUSH),
        clock.tick(source.integer(1, 3)),
        _put(other, "new"),
        clock.crash(source.integer(1, 3)),
        _put(key, source.choice(VALUES)),
    ]


def draw_ttl_history(source: Source, domain_name: str = "total", max_blocks: int = 6) -> History:
    """`open`, then blocks of a few writes ended by a flush/compaction/crash, or aimed scenarios."""
    options: dict[str, int] = {}
    if source.boolean(0.5):
        options[StoreArg.DEFAULT_TTL] = source.choice((2, 5))
    if source.boolean(0.3):
        options[StoreArg.INTERVAL] = source.choice((0, 2))
    clock, actions = _Clock(), [Action(StoreAction.OPEN, options)]

    def block() -> list[Action]:
        if source.boolean(0.35):
            return draw_scenario(source, clock, options.get(StoreArg.INTERVAL))
        writes = repeat(source, lambda: draw_write(source, clock), 0, 3, 0.6)
        return writes + draw_end(source, clock)

    for chunk in repeat(source, block, 1, max_blocks, 0.75):
        actions += chunk
    return History(domain_name, tuple(actions))


def draw_compaction_history(source: Source, domain_name: str = "total") -> History:
    """Runs of rows (newest run first, at most one version per key per run) and 1-3 compactions.

    Seqs fall with the run's age, timestamps cluster around the compaction nows so
    `expire_ts == now` is common, and older value versions sit under newer ones.
    """
    runs = source.integer(1, 4)
    actions, seq = [], 100
    for run in range(runs):
        for key in KEYS:
            if not source.boolean(0.7):
                continue
            seq -= source.integer(1, 3)
            create = source.integer(0, 4)
            args: dict[str, Any] = {RowArg.RUN: run, RowArg.KEY: key}
            if source.boolean(0.25):
                args |= {RowArg.SEQ: seq, RowArg.CREATE: create, RowArg.EXPIRE: NEVER}
                actions.append(Action(CompactionAction.ROW, args))
                continue
            expire = source.choice((NEVER, create + 1, create + 2, create + 3, 6))
            args |= {RowArg.VALUE: source.choice(VALUES), RowArg.SEQ: seq, RowArg.CREATE: create}
            actions.append(Action(CompactionAction.ROW, args | {RowArg.EXPIRE: expire}))
    actions.extend(
        Action(
            CompactionAction.COMPACT,
            {CompactionArg.NOW: source.integer(0, 7), CompactionArg.LAST: source.boolean(0.5)},
        )
        for _ in range(source.integer(1, 3))
    )
    return History(domain_name, tuple(actions))


def draw_bytes(source: Source, max_len: int) -> str:
    """Hex of a short byte string over a small alphabet (so keys collide and sort interestingly)."""
    return "".join(source.choice(("00", "61", "62", "ff")) for _ in range(source.integer(0, max_len)))


def draw_codec_history(source: Source, domain_name: str = "total") -> History:
    """Rows (distinct keys, sorted at encode time), one encode (v0 or v1), then corruptions."""
    version, stamped = source.choice(((1, True), (1, True), (0, False), (1, False)))
    keys = sorted(set(repeat(source, lambda: draw_bytes(source, 3), 0, 5, 0.7)), key=bytes.fromhex)
    actions, base = [], source.choice((0, -5, 2**40, -(2**63)))
    for seq, key in enumerate(keys, start=1):
        args: dict[str, Any] = {RowArg.KEY: key, RowArg.SEQ: source.choice((seq, seq + 2**63))}
        tombstone = source.boolean(0.25)
        if not tombstone:
            args[RowArg.VALUE] = draw_bytes(source, 4)
        if version == 1:
            create = base + source.integer(0, 3) if stamped else base
            if stamped:
                args[RowArg.CREATE] = create
            args[RowArg.EXPIRE] = NEVER if tombstone or source.boolean(0.5) else create + source.integer(1, 5)
        else:
            args[RowArg.EXPIRE] = NEVER
        actions.append(Action(CodecAction.ROW, args))
    created = base + source.integer(0, 3)
    actions.append(Action(CodecAction.ENCODE, {CodecArg.VERSION: version, CodecArg.CREATED: created}))
    for _ in range(source.integer(0, 3)):
        if source.boolean(0.7):
            actions.append(
                Action(
                    CodecAction.CORRUPT,
                    {CodecArg.OFFSET: source.integer(0, 400), CodecArg.XOR: source.integer(1, 255)},
                )
            )
        else:
            actions.append(Action(CodecAction.TRUNCATE, {CodecArg.LENGTH: source.integer(0, 400)}))
    return History(domain_name, tuple(actions))
