"""Reclocking histories: a source that advances, IntoTime ticks that mint bindings, updates, reads.

Vocabulary (plain data; the model's semantics are in `frontier_harness.properties.checks.reclocking.reclock`):

- `mint {upper, tick}`: the source upper (a FromTime frontier; `()` closes the
  source) observed at IntoTime `tick`; a tick not beyond the remap's upper is skipped.
- `update {data, time, diff}`: a source update at FromTime `time`.
- `compact {to}`: compact the remap to IntoTime since `{to}`.
- `read {tick}`: observe `R(tick)`.
- `invert {tick}` or `invert {closed: true}`: observe `source_upper_at({tick})` (or at `{}`).
- `reclock {}`: observe the reclocked collection and the pending updates so far.

Restart histories (`draw_restart_history`) use `mint`, `update` (simple case) or
`data {txn, payload, time}` / `txn {txn, size, time}` (transactional case, FromTime
`product(D, total)`: a data record's time is `(d, 0)`, a metadata record's
`(minimum, m)`; only its own coordinate matters), and `crash {tick}`.

Generated histories are valid (the source upper never goes back, `since` never
goes back and stays before the upper, reads are readable) so the model rejects none.

>>> from frontier_harness.properties.engine.source import RandomSource
>>> h = draw_reclock_history(RandomSource(1), "partitioned")
>>> {a.name for a in h.actions} <= set(ReclockAction)
True
"""

from __future__ import annotations

from typing import Any

import attrs

from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import Domain, Partitioned, PartitionedTime, Product, parse_domain
from frontier_harness.model.vocabulary import Arg
from frontier_harness.model.vocabulary.reclocking import ReclockAction, ReclockArg, RestartAction
from frontier_harness.properties.checks.time.strategies.times import draw_frontier, draw_time
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.source import Source

DATA = ("a", "b", "c")
MAX_STEP = 3


@attrs.define
class _Clock:
    """What the generator tracks to stay valid: source upper, last tick, since, closed."""

    domain: Domain
    upper: Antichain
    offsets: dict[int, int] = attrs.field(factory=dict)  # partition -> next offset
    tick: int = 0
    since: int = 0
    closed: bool = False


def _advance_upper(source: Source, clock: _Clock) -> Antichain:
    """A source upper `>=` the current one: bumped offsets, new partitions, joined frontiers (in
    `partitioned` sometimes a range over a point, so one partition is covered at two offsets)."""
    d = clock.domain
    if d.name == "total":
        return Antichain.of(d, [next(iter(clock.upper)) + source.integer(0, MAX_STEP)])
    if isinstance(d, Partitioned):
        offsets = dict(clock.offsets)
        p = source.integer(0, min(len(offsets), 2))
        offsets[p] = offsets.get(p, 0) + source.integer(0, MAX_STEP)
        clock.offsets = offsets
        live = d.live_frontier(offsets)
        if source.integer(0, 3) == 0:
            live = _overlapping(source, len(offsets), live)
        return clock.upper.join(Antichain.of(d, live))
    drawn = draw_frontier(source, d, 2)
    return clock.upper if drawn.is_empty() else clock.upper.join(drawn)


def _overlapping(source: Source, known: int, live: list) -> list:
    """`live` with the unseen partitions from `known` to `hi` a range at offset `b` over one of them at a
    smaller offset (two incomparable elements cover that partition), the rest after `hi` at 0."""
    hi, a = known + source.integer(1, 2), source.integer(0, 1)
    q, b = source.integer(known, hi), a + source.integer(2, 2 * MAX_STEP)
    return live[:-1] + [
        PartitionedTime(known, hi, b),
        PartitionedTime.point(q, a),
        PartitionedTime.rest(hi + 1),
    ]


def draw_mint(source: Source, clock: _Clock) -> Action:
    """A tick (sometimes not advancing) with the source upper observed then; rarely closing."""
    tick = max(0, clock.tick + source.integer(-1, MAX_STEP))
    if source.integer(0, 11) == 0:
        upper = Antichain(clock.domain)
    else:
        upper = _advance_upper(source, clock) if not clock.closed else clock.upper
    if tick > clock.tick and not clock.closed:
        clock.tick, clock.upper = tick, upper
        clock.closed = upper.is_empty()
    return Action(ReclockAction.MINT, {Arg.UPPER: tuple(upper.sorted()), ReclockArg.TICK: tick})


def draw_source_time(source: Source, domain: Domain) -> Any:
    """A FromTime: Partitioned times are mostly single partitions (Kafka records), sometimes ranges."""
    if domain.name == "partitioned" and source.integer(0, 5) > 0:
        return PartitionedTime.point(source.integer(0, 3), source.integer(0, 8))
    return draw_time(source, domain)


def draw_update(source: Source, domain: Domain) -> Action:
    diff = source.choice((1, 1, -1, 2))
    data, time = source.choice(DATA), draw_source_time(source, domain)
    return Action(ReclockAction.UPDATE, {Arg.DATA: data, Arg.TIME: time, Arg.DIFF: diff})


def _upper_tick(clock: _Clock) -> int:
    """The IntoTime just past the last effective tick (the remap's upper while open)."""
    return clock.tick + 1


def draw_observation(source: Source, clock: _Clock) -> Action:
    """A compaction, a read of `R`, an inversion or a reclock point, all valid for the current remap."""
    kind = source.integer(0, 3)
    last = clock.tick + (MAX_STEP if clock.closed else 0)
    if kind == 0:
        to = (
            max(clock.since, clock.tick)
            if source.boolean(0.5)
            else source.integer(clock.since, max(clock.since, last))
        )
        clock.since = to
        return Action(ReclockAction.COMPACT, {ReclockArg.TO: to})
    if kind == 1:
        return Action(
            ReclockAction.READ, {ReclockArg.TICK: source.integer(clock.since, max(clock.since, last))}
        )
    if kind == 2:
        if clock.closed and source.boolean(0.3):
            return Action(ReclockAction.INVERT, {ReclockArg.CLOSED: True})
        return Action(
            ReclockAction.INVERT, {ReclockArg.TICK: source.integer(0, max(last, _upper_tick(clock)))}
        )
    return Action(ReclockAction.RECLOCK, {})


def draw_reclock_history(source: Source, domain_name: str, max_steps: int = 16) -> History:
    """Mints, updates and observations interleaved; valid for the model by construction."""
    domain = parse_domain(domain_name)
    clock = _Clock(domain, Antichain.of(domain, [domain.minimum]))

    def one() -> Action:
        kind = source.integer(0, 9)
        if kind < 4:
            return draw_update(source, domain)
        if kind < 7:
            return draw_mint(source, clock)
        return draw_observation(source, clock)

    return History(domain_name, tuple(_several(source, one, 1, max_steps)))


def _several(source: Source, draw_one, min_size: int, max_size: int) -> list:
    """Like `repeat`, with a "one more?" die that says yes 9 times in 10 under Hypothesis too
    (its coins are fair, which keeps histories short); it shrinks to "stop", so deletions shrink."""
    items = [draw_one() for _ in range(min_size)]
    while len(items) < max_size and source.integer(0, 9) > 0:
        items.append(draw_one())
    return items


def transactional_domain(domain_name: str) -> str:
    """The FromTime of the transactional case over data domain `domain_name`: `product(D, total)`."""
    return f"product({domain_name},total)"


def draw_records(source: Source, data_domain: Domain, transactions: int) -> list[Action]:
    """Transactions `t0..` with metadata in order, sizes 0-3, some data records late or missing."""
    actions, meta = [], 0
    for i in range(transactions):
        size = source.integer(1, 3)
        size = 0 if source.integer(0, 7) == 7 else size  # complete as soon as its metadata is covered
        meta += source.integer(0, 2)
        meta_time = (data_domain.minimum, meta)
        actions.append(
            Action(RestartAction.TXN, {ReclockArg.TXN: f"t{i}", ReclockArg.SIZE: size, Arg.TIME: meta_time})
        )
        missing = source.integer(0, size) if source.boolean(0.3) else 0  # shrinks towards complete
        for j in range(size - missing):
            data_time = draw_source_time(source, data_domain)
            record: dict[str, Any] = {
                ReclockArg.TXN: f"t{i}",
                ReclockArg.PAYLOAD: f"t{i}:{j}",
                Arg.TIME: (data_time, 0),
            }
            actions.append(Action(RestartAction.DATA, record))
    return actions


def draw_restart_history(source: Source, domain_name: str, transactional: bool = False) -> History:
    """Mints, source records (simple updates or transactions), then one crash tick."""
    name = transactional_domain(domain_name) if transactional else domain_name
    domain = parse_domain(name)
    clock = _Clock(domain, Antichain.of(domain, [domain.minimum]))
    if isinstance(domain, Product):
        records = draw_records(source, domain.a, source.integer(1, 4))
    else:
        records = _several(source, lambda: draw_update(source, domain), 0, 8)
    mints = _several(source, lambda: draw_mint(source, clock), 1, 6)
    actions = _shuffled(source, records, mints)
    crash = source.integer(0, clock.tick + (1 if clock.closed else 0))
    return History(name, tuple(actions) + (Action(RestartAction.CRASH, {ReclockArg.TICK: crash}),))


def _shuffled(source: Source, first: list, second: list) -> list:
    """The two lists interleaved, each in its own order."""
    merged, i, j = [], 0, 0
    while i < len(first) or j < len(second):
        if j >= len(second) or (i < len(first) and source.boolean()):
            merged.append(first[i])
            i += 1
        else:
            merged.append(second[j])
            j += 1
    return merged
