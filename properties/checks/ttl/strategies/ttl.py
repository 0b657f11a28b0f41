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
hex keys and values, one `encode(version, created)`, then `corrupt(offset, xor)`
or `truncate(length)` actions applied, each alone, to the encoded bytes.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_ttl_history(RandomSource(1), "total")
>>> h.actions[0].name
'open'
"""

from __future__ import annotations

from typing import Any

from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source, repeat

KEYS = ("a", "b", "c")
VALUES = ("x", "y", "z")
I64_MAX, I64_MIN = 2**63 - 1, -(2**63)
NEVER = I64_MAX
ALL, NEWEST = {"start": 0, "length": 99}, {"start": 0, "length": 0}


class _Clock:
    """The generator's idea of the user clock, so `expire_at` and `set_clock` land near it."""

    def __init__(self) -> None:
        self.ms = 0

    def tick(self, ms: int) -> Action:
        self.ms += ms
        return Action("tick", {"ms": ms})

    def set(self, ms: int) -> Action:
        self.ms = ms
        return Action("set_clock", {"ms": ms})

    def crash(self, back: int) -> Action:
        """A crash; while the store is down the user clock goes `back` ms back (not below 0)."""
        self.ms = max(0, self.ms - back)
        return Action("crash", {"ms": self.ms})


def _put(key: str, value: str, ttl: int | None = None, expire_at: int | None = None) -> Action:
    args: dict[str, object] = {"key": key, "value": value}
    if ttl is not None:
        args["ttl"] = ttl
    if expire_at is not None:
        args["expire_at"] = expire_at
    return Action("put", args)


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
        return Action("delete", {"key": key})
    if kind < 9:
        return clock.tick(source.integer(0, 3))
    return clock.set(max(0, clock.ms - source.integer(1, 3)))


def draw_end(source: Source, clock: _Clock) -> list[Action]:
    """What ends a block of writes: nothing, a flush, a compaction, periodic compaction, a crash."""
    kind = source.integer(0, 6)
    compact = Action("compact", {"start": source.integer(0, 3), "length": source.integer(0, 3)})
    return [
        [],
        [Action("flush")],
        [Action("flush"), compact],
        [compact],
        [Action("periodic")],
        [Action("crash")],
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
            Action("flush"),
            clock.tick(interval if source.integer(0, 3) == 3 else delay),  # exactly the interval: not due
            Action("periodic"),
        ]
    if kind >= 4:  # a read sees a row expire; the clock restarts after its write, before its expiry
        ttl = source.integer(1, 3)
        late = source.integer(0, 2)
        return [_put(key, source.choice(VALUES), ttl=ttl), clock.tick(ttl + late), clock.crash(late + 1)]
    if kind == 0:  # an expired newer version over an older one in a lower run, then a non-last-run compaction
        ttl = source.integer(1, 3)
        return [
            _put(key, "old"),
            Action("flush"),
            Action("compact", ALL),
            _put(key, "new", ttl=ttl),
            Action("flush"),
            clock.tick(ttl + source.integer(0, 1)),
            _put(other, source.choice(VALUES)),
            Action("flush"),
            Action("compact", NEWEST),
        ]
    if kind == 1:  # a tombstone over an older version in a lower run
        return [
            _put(key, "old"),
            Action("flush"),
            Action("compact", ALL),
            Action("delete", {"key": key}),
            Action("flush"),
            Action("compact", NEWEST),
        ]
    if kind == 2:  # a read exactly at expire_ts
        ttl = source.integer(1, 3)
        return [_put(key, source.choice(VALUES), ttl=ttl), clock.tick(ttl)]
    # a crash with unflushed writes, the user clock set back below them while the store is down
    return [
        _put(key, "old"),
        Action("flush"),
        clock.tick(source.integer(1, 3)),
        _put(other, "new"),
        clock.crash(source.integer(1, 3)),
        _put(key, source.choice(VALUES)),
    ]


def draw_ttl_history(source: Source, domain_name: str = "total", max_blocks: int = 6) -> History:
    """`open`, then blocks of a few writes ended by a flush/compaction/crash, or aimed scenarios."""
    options: dict[str, int] = {}
    if source.boolean(0.5):
        options["default_ttl"] = source.choice((2, 5))
    if source.boolean(0.3):
        options["interval"] = source.choice((0, 2))
    clock, actions = _Clock(), [Action("open", options)]

    def block() -> list[Action]:
        if source.boolean(0.35):
            return draw_scenario(source, clock, options.get("interval"))
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
            if source.boolean(0.25):
                actions.append(
                    Action("row", {"run": run, "key": key, "seq": seq, "create": create, "expire": NEVER})
                )
                continue
            expire = source.choice((NEVER, create + 1, create + 2, create + 3, 6))
            value = source.choice(VALUES)
            actions.append(
                Action(
                    "row",
                    {"run": run, "key": key, "value": value, "seq": seq, "create": create, "expire": expire},
                )
            )
    actions.extend(
        Action("compact", {"now": source.integer(0, 7), "last": source.boolean(0.5)})
        for _ in range(source.integer(1, 3))
    )
    return History(domain_name, tuple(actions))


def draw_bytes(source: Source, max_len: int) -> str:
    """Hex of a short byte string over a small alphabet (so keys collide and sort interestingly)."""
    return "".join(source.choice(("00", "61", "62", "ff")) for _ in range(source.integer(0, max_len)))


def draw_codec_history(source: Source, domain_name: str = "total") -> History:
    """Rows (distinct keys, sorted at encode time), one encode (v0 or v1), then corruptions."""
    version = source.choice((1, 1, 0))
    keys = sorted(set(repeat(source, lambda: draw_bytes(source, 3), 0, 5, 0.7)), key=bytes.fromhex)
    actions, base = [], source.choice((0, -5, 2**40, -(2**63)))
    for seq, key in enumerate(keys, start=1):
        args: dict[str, Any] = {"key": key, "seq": source.choice((seq, seq + 2**63))}
        tombstone = source.boolean(0.25)
        if not tombstone:
            args["value"] = draw_bytes(source, 4)
        if version == 1:
            args["create"] = base + source.integer(0, 3)
            args["expire"] = (
                NEVER if tombstone or source.boolean(0.5) else args["create"] + source.integer(1, 5)
            )
        else:
            args["expire"] = NEVER
        actions.append(Action("row", args))
    actions.append(Action("encode", {"version": version, "created": base + source.integer(0, 3)}))
    for _ in range(source.integer(0, 3)):
        if source.boolean(0.7):
            actions.append(
                Action("corrupt", {"offset": source.integer(0, 400), "xor": source.integer(1, 255)})
            )
        else:
            actions.append(Action("truncate", {"length": source.integer(0, 400)}))
    return History(domain_name, tuple(actions))
