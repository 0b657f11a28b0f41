"""Dataflow expiration: the rules, their soundness, the success criterion and planted bugs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.catalog import expiration as ex
from frontier_harness.model.catalog.catalog import (
    Catalog,
    Constant,
    Feed,
    Index,
    MaterializedView,
    RefreshAt,
    RefreshEvery,
    Select,
    Source,
    Subscribe,
    Table,
    View,
    upper_at,
)
from frontier_harness.model.catalog.plan import Get, Project, TemporalFilter, Union
from frontier_harness.model.catalog.temporal import MzNow
from frontier_harness.model.errors import DataflowExpired, InvalidReplica, ReplicaExpired, ReplicaNotRunning
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.collection import Update
from frontier_harness.model.time.domains import Total

T = Total()
FAST = settings(max_examples=60, deadline=None, database=None)
BOUNDS = st.one_of(st.none(), st.integers(0, 50))


def last_n(window: int):
    """`mz_now() <= row[0] + window`: the seed's `last_30_days` shape."""
    return TemporalFilter(Get("t"), (MzNow("<=", 0, window),))


def base() -> Catalog:
    return Catalog().add(Table("t")).add(Source.create("g", "load_generator")).add(Constant("k", [(0,)]))


# ---------------------------------------------------------------- arithmetic


@given(BOUNDS, BOUNDS)
def test_frontier_meet_is_the_antichain_meet(a, b):
    def frontier(x):
        return Antichain.of(T, [] if x is None else [x])

    assert frontier(ex.frontier_meet(a, b)) == frontier(a).meet(frontier(b))


def test_replica_expiration_and_disable():
    assert ex.replica_expiration(7, 21) == 28
    assert ex.replica_expiration(7, 0) is None


def test_none_is_no_bound_not_the_earliest_time():
    assert ex.meet_inputs([None, 30]) == 30
    assert ex.meet_inputs([None, None]) is None
    assert ex.meet_inputs([12, 30, None]) == 12


def test_refresh_rounds_up_and_gives_none_after_the_last():
    every = (RefreshEvery(10, 5),)
    assert [ex.round_up_to_refresh(every, b) for b in (5, 6, 15, 0)] == [5, 15, 15, 5]
    assert ex.round_up_to_refresh((RefreshAt(3), RefreshAt(9)), 4) == 9
    assert ex.round_up_to_refresh((RefreshAt(3),), 4) is None
    assert ex.round_up_to_refresh((), 4) == 4
    assert ex.round_up_to_refresh(every, None) is None


def test_dataflow_expiration_steps_one_tick_and_respects_until():
    assert ex.dataflow_expiration(10, None) == 11
    assert ex.dataflow_expiration(10, 11) is None  # until already at the expiration
    assert ex.dataflow_expiration(10, 12) == 11
    assert ex.dataflow_expiration(None, 12) is None
    assert ex.meet_until(12, 11) == 11 and ex.meet_until(None, 11) == 11


@given(BOUNDS, st.integers(0, 40), BOUNDS)
def test_until_after_meet_is_never_later_than_before(bound, wall, until):
    expiration = ex.dataflow_expiration(bound, until)
    met = ex.meet_until(until, expiration)
    assert until is None or (met is not None and met <= until)
    assert expiration is None or met == expiration


# ---------------------------------------------------------------- time dependence per kind


def test_time_dependence_per_kind():
    c = (
        base()
        .add(Source.create("d", "cdc"))
        .add(View("v", last_n(5)))
        .add(View("u", Union((Get("t"), Get("g")))))
        .add(View("gk", Union((Get("g"), Get("k")))))
        .add(MaterializedView("r", Get("t"), (RefreshEvery(10, 0),)))
        .add(MaterializedView("once", Get("t"), (RefreshAt(4),)))
        .add(Subscribe("s", Get("t"), up_to=3))
        .add(Index("i", "u"))
    )
    bound = {
        n: ex.time_dependence(c, n, 7) for n in ("t", "g", "k", "d", "v", "u", "gk", "r", "once", "s", "i")
    }
    assert bound == {
        "t": 7,
        "g": None,
        "k": None,
        "d": None,
        "v": 7,
        "u": 7,
        "gk": None,
        "r": 10,
        "once": None,
        "s": 3,
        "i": 7,
    }


def test_only_mvs_indexes_and_subscribes_expire():
    c = base().add(View("v", last_n(5))).add(MaterializedView("m", Get("v"))).add(Index("i", "v"))
    c = c.add(Subscribe("s", Get("v"))).add(Select("q", Get("v")))
    flows = {n: ex.render(c, n, 20) for n in ("v", "m", "i", "s", "q")}
    assert {n: f.expiration for n, f in flows.items()} == {"v": None, "m": 21, "i": 21, "s": 21, "q": None}
    assert ex.render(c, "m", None).expiration is None


def test_non_epoch_and_load_generator_dataflows_never_expire():
    c = base().add(Source.create("d", "cdc")).add(MaterializedView("md", Get("d")))
    c = c.add(MaterializedView("mg", Union((Get("g"), Get("k")))))
    assert ex.render(c, "md", 20).expiration is None
    assert ex.render(c, "mg", 20).expiration is None


def test_subscribe_up_to_before_the_expiration_keeps_its_until():
    c = base().add(Subscribe("s", last_n(5), up_to=9))
    assert ex.render(c, "s", 20) == ex.Dataflow("s", 9, None)
    c = base().add(Subscribe("s", last_n(5), up_to=90))
    assert ex.render(c, "s", 20) == ex.Dataflow("s", 21, 21)


# ---------------------------------------------------------------- catalogs and feeds for properties


@st.composite
def scenarios(draw):
    """A catalog over a table, a load generator and a constant, a feed, an offset and restarts."""
    horizon = draw(st.integers(4, 14))
    c = base().add(View("v", last_n(draw(st.integers(0, 8)))))
    names = []
    for i in range(draw(st.integers(1, 3))):
        inputs = draw(st.lists(st.sampled_from(["t", "g", "k", "v"]), min_size=1, max_size=3, unique=True))
        plan = Union(tuple(Project(Get(n), (0,)) for n in inputs))
        if draw(st.booleans()):
            plan = TemporalFilter(
                plan, (MzNow(draw(st.sampled_from(["<=", "<", ">="])), 0, draw(st.integers(-2, 6))),)
            )
        refresh = draw(
            st.sampled_from(
                [
                    (),
                    (RefreshEvery(draw(st.integers(1, 6)), draw(st.integers(0, 6))),),
                    (RefreshAt(draw(st.integers(0, 2 * horizon))),),
                ]
            )
        )
        c = c.add(MaterializedView(f"m{i}", plan, refresh))
        names.append(f"m{i}")
    c = c.add(Index("iv", "v")).add(Index(f"i{names[0]}", names[0]))
    c = c.add(Subscribe("s", Get("v"), up_to=draw(st.one_of(st.none(), st.integers(0, 2 * horizon)))))
    names += ["iv", f"i{names[0]}", "s"]
    rows = st.builds(
        lambda t, d, diff: Update((t + d,), t, diff),
        st.integers(0, horizon),
        st.integers(-3, 3),
        st.sampled_from([1, 1, -1, 2]),
    )
    ticks = sorted(
        draw(st.lists(st.tuples(st.integers(0, horizon), st.integers(0, 3 * horizon)), max_size=4))
    )
    ticks = tuple((w, max(u for _, u in ticks[: i + 1])) for i, (w, _) in enumerate(ticks))
    feed = Feed(
        {"t": tuple(draw(st.lists(rows, max_size=6))), "g": tuple(draw(st.lists(rows, max_size=3)))},
        {"g": ticks},
        {"t": draw(skews_within_the_bound(horizon))},
    )
    offset = draw(st.integers(1, 8))
    starts = [draw(st.integers(0, 3))]
    while starts[-1] + offset < horizon:
        starts.append(starts[-1] + draw(st.integers(1, offset + 1)))
    return c, feed, offset, tuple(starts), names, horizon


@st.composite
def skews_within_the_bound(draw, horizon: int):
    """A table's skew schedule that never gets further ahead than it was: each skew <= max(0, the one before).

    Leads (the +1 of minting among them), lags, lags that catch up, leads that shrink.
    """
    points, by = [], draw(st.integers(-4, 4))
    for wall in [0] + sorted(draw(st.sets(st.integers(1, horizon), max_size=2))):
        points.append((wall, by))
        by = draw(st.integers(-4, max(0, by)))
    return tuple(points)


def differences(catalog, feed, offset, starts, names, horizon):
    """Every read whose answer differs between expiration enabled and disabled."""
    on, off = ex.Replica(offset, starts), ex.Replica(0, starts)
    found = []
    for name in names:
        for wall in range(starts[0], horizon + 1):
            for time in range(wall + 3):
                a = ex.served(catalog, feed, on, name, wall, time)
                b = ex.served(catalog, feed, off, name, wall, time)
                if a != b:
                    found.append((name, wall, time, a, b))
    return found


# ---------------------------------------------------------------- soundness and the success criterion


@FAST
@given(scenarios(), st.integers(0, 10), st.integers(0, 10))
def test_time_dependence_bounds_every_upper_from_the_render_to_that_wall_time(scenario, render, ahead):
    catalog, feed, _, _, names, _ = scenario
    wall, seen = render + ahead, ex.seen_at(catalog, feed, render)
    for name in names:
        bound = ex.time_dependence(catalog, name, wall, seen)
        for later in range(render, wall + 1):
            upper = upper_at(catalog, feed, name, later)
            assert bound is None or upper.le(Antichain.of(T, [bound]))


@FAST
@given(scenarios())
def test_reads_are_identical_with_expiration_enabled_and_disabled(scenario):
    assert differences(*scenario) == []


def seed_scenario():
    """The seed's example, scaled down: a 30-tick window, a 21-tick offset, weekly-ish restarts."""
    c = Catalog().add(Table("t")).add(View("v", last_n(30))).add(Index("i", "v"))
    c = c.add(MaterializedView("m", Get("v"))).add(Subscribe("s", Get("v")))
    feed = Feed({"t": tuple(Update((w,), w, 1) for w in range(0, 40, 3))})
    return c, feed, 21, (0, 7, 14, 21, 28, 35), ["i", "m", "s"], 40


def test_seed_scenario_is_identical_and_halves_the_diffs():
    c, feed, offset, starts, names, horizon = seed_scenario()
    assert differences(c, feed, offset, starts, names, horizon) == []
    first = Feed({"t": tuple(u for u in feed.updates["t"] if u.time < offset)})  # what incarnation 0 sees
    without = ex.diffs_processed(c, first, "m", None)
    with_expiration = ex.diffs_processed(c, first, "m", ex.replica_expiration(0, offset))
    assert (without, with_expiration) == (14, 7)


def test_expired_dataflows_drop_every_temporal_diff_at_or_after_the_expiration():
    c, feed, *_ = seed_scenario()
    flow = ex.render(c, "m", 21)
    from frontier_harness.model.catalog.catalog import output_updates

    assert flow.until == 22 and all(u.time < 22 for u in output_updates(c, feed, "m", flow.until))


def test_replica_restarts_recompute_from_the_new_start():
    c, feed, *_ = seed_scenario()
    replica = ex.Replica(21, (0, 7))
    assert replica.expiration_at(21) == 28 and replica.expiration_at(6) == 21
    assert ex.serve(c, feed, replica, "m", 27, 26) == ex.serve(c, feed, ex.Replica(0, (0,)), "m", 27, 26)
    with pytest.raises(ReplicaExpired, match="expired at 28"):
        ex.serve(c, feed, replica, "m", 29, 3)


def test_reads_at_or_beyond_the_expiration_are_refused():
    c, feed, *_ = seed_scenario()
    with pytest.raises(DataflowExpired, match="expires at 22"):
        ex.serve(c, feed, ex.Replica(21, (0,)), "m", 21, 22)
    assert ex.serve(c, feed, ex.Replica(21, (0,)), "m", 21, 21) is None  # not complete yet, not expired


def test_replica_validation():
    with pytest.raises(InvalidReplica, match="offset -1"):
        ex.Replica(-1, (0,))
    with pytest.raises(InvalidReplica, match=r"starts \(3, 3\)"):
        ex.Replica(1, (3, 3))
    with pytest.raises(ReplicaNotRunning, match="first starts at 3"):
        ex.Replica(1, (3,)).start_at(2)


# ---------------------------------------------------------------- planted bugs


def assert_caught(monkeypatch, rule, replacement, scenario):
    assert differences(*scenario) == []
    monkeypatch.setattr(ex, rule, replacement)
    assert differences(*scenario) != []


def test_planted_no_one_tick_step(monkeypatch):
    scenario = (base().add(MaterializedView("m", Get("t"))), Feed(), 5, (0,), ["m"], 5)
    assert_caught(monkeypatch, "step_one_tick", lambda t: t, scenario)


def test_planted_refresh_schedule_ignored(monkeypatch):
    scenario = (
        base().add(MaterializedView("m", Get("t"), (RefreshEvery(10, 0),))),
        Feed(),
        5,
        (0,),
        ["m"],
        5,
    )
    assert_caught(monkeypatch, "round_up_to_refresh", lambda schedule, bound: bound, scenario)


def test_planted_load_generator_given_an_expiration(monkeypatch):
    feed = Feed(ticks={"g": ((0, 20),)})
    scenario = (base().add(MaterializedView("m", Get("g"))), feed, 5, (0,), ["m"], 2)
    assert_caught(monkeypatch, "source_bound", lambda kind, epoch, wall: wall if epoch else None, scenario)


def test_planted_none_combined_as_the_earliest_time(monkeypatch):
    def earliest(a, b):
        return min(0 if a is None else a, 0 if b is None else b)

    feed = Feed(ticks={"g": ((0, 20),)})
    scenario = (base().add(MaterializedView("m", Union((Get("t"), Get("g"))))), feed, 5, (0,), ["m"], 2)
    assert_caught(monkeypatch, "meet_bounds", earliest, scenario)


def test_planted_until_joined_instead_of_met(monkeypatch):
    """A join leaves `until` unchanged: no read differs, but no retraction is dropped either."""
    c, feed, *_ = seed_scenario()
    assert ex.diffs_processed(c, feed, "m", 21) < ex.diffs_processed(c, feed, "m", None)
    monkeypatch.setattr(
        ex, "meet_until", lambda until, e: None if until is None or e is None else max(until, e)
    )
    assert ex.diffs_processed(c, feed, "m", 21) == ex.diffs_processed(c, feed, "m", None)


def test_planted_retraction_at_upper_instead_of_upper_exclusive(monkeypatch):
    import frontier_harness.model.catalog.temporal as temporal

    c = Catalog().add(Table("t")).add(View("v", last_n(0))).add(Index("i", "v"))
    feed = Feed({"t": (Update((0,), 0, 1),)})
    assert ex.serve(c, feed, ex.Replica(0, (0,)), "i", 5, 0) == {(0,): 1}
    monkeypatch.setattr(temporal, "upper_exclusive", lambda op, bound: bound)
    assert ex.serve(c, feed, ex.Replica(0, (0,)), "i", 5, 0) == {}


# ---------------------------------------------------------------- inputs ahead of or behind the wall clock


def minted_index():
    """The issue's case: table `t` one tick ahead of the wall clock (as a minted source), index `i`."""
    c = Catalog().add(Table("t")).add(Index("i", "t"))
    return c, Feed({"t": (Update((1,), 3, 1),)}, skews={"t": ((0, 1),)})


def test_an_input_one_tick_ahead_is_served_at_the_replica_expiration():
    c, feed = minted_index()
    assert ex.render(c, "i", 10, ex.seen_at(c, feed, 0)) == ex.Dataflow("i", 12, 12)
    assert ex.served(c, feed, ex.Replica(10, (0,)), "i", 10, 10) == {(1,): 1}
    assert differences(c, feed, 10, (0,), ["i"], 10) == []


def test_planted_without_the_inputs_upper_branch(monkeypatch):
    c, feed = minted_index()
    monkeypatch.setattr(ex, "inputs_bound", lambda inputs_upper, expiration: expiration)
    assert ex.served(c, feed, ex.Replica(10, (0,)), "i", 10, 10) is None
    assert ex.served(c, feed, ex.Replica(0, (0,)), "i", 10, 10) == {(1,): 1}


@pytest.mark.parametrize(
    "skew, bound",
    [(((0, 3),), 13), (((0, -2),), 10), (((0, -9), (4, 0)), 10), (((0, 3), (2, 1)), 13)],
)
def test_the_branch_carries_a_lead_to_the_expiration_and_ignores_a_lag(skew, bound):
    c = Catalog().add(Table("t")).add(Index("i", "t"))
    feed = Feed(skews={"t": skew})
    assert ex.time_dependence(c, "i", 10, ex.seen_at(c, feed, 0)) == bound


def test_the_meet_of_a_leading_and_a_lagging_input_is_not_ahead():
    c = base().add(Source.create("s", "kafka")).add(MaterializedView("m", Union((Get("t"), Get("s")))))
    feed = Feed(skews={"t": ((0, -2),), "s": ((0, 5),)})
    assert ex.render(c, "m", 10, ex.seen_at(c, feed, 0)).expiration == 11


def test_an_input_that_gets_further_ahead_after_the_render_is_caught_never_served_wrong():
    """Beyond the bound: `t` jumps two ticks ahead after the replica rendered; the frontier check refuses."""
    c = Catalog().add(Table("t")).add(View("v", last_n(0))).add(Index("i", "v"))
    feed = Feed({"t": (Update((9,), 9, 1),)}, skews={"t": ((0, 0), (5, 2))})
    on, off = ex.Replica(10, (0,)), ex.Replica(0, (0,))
    assert ex.served(c, feed, off, "i", 10, 9) == {(9,): 1}
    with pytest.raises(DataflowExpired, match=r"its upper is \{12\}"):
        ex.serve(c, feed, on, "i", 10, 9)
    assert ex.served(c, feed, on, "i", 8, 9) == ex.served(c, feed, off, "i", 8, 9)  # before the pass


def test_planted_without_the_frontier_check_serves_wrong_data(monkeypatch):
    c = Catalog().add(Table("t")).add(View("v", last_n(0))).add(Index("i", "v"))
    feed = Feed({"t": (Update((10,), 10, 1),)}, skews={"t": ((0, 0), (5, 2))})
    on, off = ex.Replica(10, (0,)), ex.Replica(0, (0,))
    assert ex.served(c, feed, on, "i", 10, 11) is None and ex.served(c, feed, off, "i", 10, 11) == {}
    monkeypatch.setattr(ex, "check_not_expired", lambda flow, upper, time: None)
    assert ex.served(c, feed, on, "i", 10, 11) == {(10,): 1}  # the retraction at 11 was dropped


def test_skews_are_for_wall_clock_leaves_with_increasing_walls():
    from frontier_harness.model.catalog.catalog import check_feed
    from frontier_harness.model.errors import InvalidSkew

    with pytest.raises(InvalidSkew, match="increasing"):
        Feed(skews={"t": ((3, 1), (3, 2))})
    with pytest.raises(InvalidSkew, match="'g'"):
        check_feed(base(), Feed(skews={"g": ((0, 1),)}))
