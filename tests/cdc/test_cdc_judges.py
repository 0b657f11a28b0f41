"""The cdc suite's judges on written observations: each law holds on a faithful trial and fails, naming
what broke, on one that breaks it; hard cases are required of the observation."""

from __future__ import annotations

import pytest

from frontier_harness.model.cdc.sessions import committed
from frontier_harness.properties.checks.cdc import cdc
from frontier_harness.properties.checks.cdc.strategies import cdc as strategies
from frontier_harness.properties.engine.history import Action, History
from frontier_harness.properties.engine.infrastructure import InfrastructureError

FIRST, END = 100, 200  # where the slot began; where transaction 0 ends


def history(*actions: tuple) -> History:
    return History("total", tuple(Action(name, args) for name, args in actions))


def txn(key: int, value: str, session: int = 0) -> list[tuple]:
    return [
        ("begin", {"session": session}),
        ("write", {"session": session, "op": "insert", "key": key, "value": value}),
        ("commit", {"session": session}),
    ]


ONE = history(*txn(1, "a"), ("trigger", {}))


def observed(step: int, offsets=(), commits=(), table=(), changes=(), slot=FIRST, calls=(), **extra) -> dict:
    """One step of a trial's observation, transaction 0 ending at END (one row change)."""
    obs = {
        (step, "offsets"): frozenset(offsets),
        (step, "commits"): frozenset(commits),
        (step, "table"): frozenset((row, 1) for row in table),
        (step, "changes"): frozenset((c, 1) for c in changes),
        (step, "transactions"): frozenset({(0, 700, END, 1, False)}),
        (step, "slot"): frozenset({(slot, slot, "reserved")}),
        (step, "source_commits"): frozenset(enumerate(calls)),
        (step, "starts"): frozenset({(0, 0, FIRST, FIRST)}),
        (step, "postgres"): frozenset({(0, "t0")}),
    }
    return obs | {(step, label): frozenset(rows) for label, rows in extra.items()}


def judged(judge, history: History, obs: dict):
    return judge(history, obs, cdc.ObservedTrial(history, obs, committed(history)))


GOOD = observed(3, offsets=[(0, END)], commits=[0], table=[(1, "a")], changes=[(0, 700, 0, "insert", 1, "a")])


def test_a_faithful_trial_holds_every_law():
    for judge in (cdc.remap_atomic, cdc.bounded_input_reliance, cdc.exactly_once, cdc.checkpoint_validates):
        assert judged(judge, ONE, GOOD).ok, judge.__name__


def test_exactly_once_names_the_rows_missing_from_the_table():
    lagging = observed(3, offsets=[(0, END)], commits=[0], table=[])
    outcome = judged(cdc.exactly_once, ONE, lagging)
    assert not outcome.ok and "missing [(1, 'a')]" in outcome.message and "0/C8" in outcome.message


def test_exactly_once_needs_every_committed_transaction_processed_at_the_end():
    outcome = judged(cdc.exactly_once, ONE, observed(3))
    assert (
        not outcome.ok
        and "transactions [0] are committed in PostgreSQL but past the durable end" in outcome.message
    )


def test_remap_atomic_refuses_a_batch_that_ends_where_no_transaction_does():
    outcome = judged(cdc.remap_atomic, ONE, observed(3, offsets=[(0, END - 8)], commits=[0]))
    assert not outcome.ok and "where no transaction ends" in outcome.message


def test_remap_atomic_refuses_a_transaction_split_across_batches():
    split = [(0, 700, 0, "insert", 1, "a"), (1, 700, 1, "update", 1, "b")]
    obs = observed(3, offsets=[(0, END)], commits=[0], changes=split)
    outcome = judged(cdc.remap_atomic, ONE, obs)
    assert (
        not outcome.ok and "belongs to batch 0; the sink holds 1 in batch 0, 1 in batch 1" in outcome.message
    )


def test_remap_atomic_refuses_a_committed_transaction_the_sink_lost_though_a_later_one_hides_it():
    """Transaction 0 inserts (1, a), transaction 1 updates it to b, both in batch 0: the sink holds only
    transaction 1's change, so the table is right and nothing is held twice, yet transaction 0 is lost."""
    two = history(
        *txn(1, "a"),
        ("begin", {"session": 0}),
        ("write", {"session": 0, "op": "update", "key": 1, "value": "b"}),
        ("commit", {"session": 0}),
        ("trigger", {}),
    )
    both = {(0, 700, END, 1, False), (1, 701, END + 100, 1, False)}
    obs = observed(
        6, offsets=[(0, END + 100)], commits=[0], table=[(1, "b")], changes=[(0, 701, 0, "update", 1, "b")]
    )
    obs[(6, "transactions")] = frozenset(both)
    assert judged(cdc.exactly_once, two, obs).ok  # the table alone cannot tell
    outcome = judged(cdc.remap_atomic, two, obs)
    assert not outcome.ok and "transaction 0 (xid 700, ending at 0/C8, 1 row changes)" in outcome.message
    assert "belongs to committed batch 0; the sink holds none of its rows" in outcome.message


def test_a_committed_transaction_the_trial_never_saw_commit_stops_the_run_never_judged_away():
    """Transaction 1 committed, but the observation reports only transaction 0's end LSN: judged as if it
    was never committed, a sink that lost it would hold every law (it was dropped from what the judges read).
    PostgreSQL's own observer slot reports the commits, so it is infrastructure (exit 3)."""
    two = history(*txn(1, "a"), *txn(2, "b"), ("trigger", {}))
    with pytest.raises(InfrastructureError, match=r"observed no commit of transactions \[1\]"):
        judged(cdc.exactly_once, two, observed(6, offsets=[(0, END)], commits=[0], table=[(1, "a")]))


@pytest.mark.parametrize(
    "write, said",
    [
        ({"op": "upsert", "key": 1}, "op 'upsert' is not one of insert, update, delete"),
        ({"op": "insert", "key": 1, "count": 0}, "count 0 is not a whole number >= 1"),
        ({"op": "insert", "key": "1"}, "key '1' is not a whole number"),
    ],
)
def test_a_write_that_describes_no_row_change_is_refused_naming_it(write, said):
    """A hand-edited file's write the model cannot read is bad input naming it (exit 2 on replay), never sent
    to PostgreSQL (an unknown op) nor an empty transaction (a count of 0)."""
    from frontier_harness.model.errors import InvalidCdcStep

    edited = history(("begin", {"session": 0}), ("write", {"session": 0, "value": "a", **write}))
    with pytest.raises(InvalidCdcStep, match=f"step 1 \\(write\\): {said}"):
        committed(edited)


def test_remap_atomic_requires_the_rows_of_every_transaction_up_to_the_durable_end_and_no_further():
    """Transaction 1 ends exactly at the durable end: its rows must be in the sink; transaction 2 ends a byte
    past it, in no committed batch: the sink need not hold it."""
    three = history(*txn(1, "a"), *txn(2, "b"), *txn(3, "c"), ("trigger", {}))
    ends = {(0, 700, END, 1, False), (1, 701, END + 100, 1, False), (2, 702, END + 101, 1, False)}
    rows = [(0, 700, 0, "insert", 1, "a"), (0, 701, 0, "insert", 2, "b")]
    kept = observed(9, offsets=[(0, END + 100)], commits=[0], changes=rows)
    lost = observed(9, offsets=[(0, END + 100)], commits=[0], changes=rows[:1])
    for obs in (kept, lost):
        obs[(9, "transactions")] = frozenset(ends)
    assert judged(cdc.remap_atomic, three, kept).ok
    outcome = judged(cdc.remap_atomic, three, lost)
    assert not outcome.ok and "transaction 1 (xid 701" in outcome.message, outcome.message


def test_bounded_input_reliance_refuses_a_slot_past_the_durable_end():
    outcome = judged(cdc.bounded_input_reliance, ONE, observed(3, offsets=[(0, END)], slot=END))
    assert not outcome.ok and "is past the durable end 0/64 (batch None)" in outcome.message


AHEAD = history(*txn(1, "a"), ("trigger", {"fault": "after_offsets"}), *txn(2, "b"), ("slot_ahead", {}))


def test_a_slot_moved_ahead_must_be_refused_naming_the_range():
    moved = observed(7, offsets=[(0, END)], slot=END, down=[("down",)])  # the slot_ahead step
    refused = [("the cdc source refused", "... the changes in (0/64, 0/C8] are gone upstream")]
    both = {(0, 700, END, 1, False), (1, 701, END + 100, 1, False)}
    ok = moved | observed(8, offsets=[(0, END)], slot=END, down=[("down",)], error=refused, transactions=both)
    assert judged(cdc.bounded_input_reliance, AHEAD, ok).ok
    went_on = moved | observed(8, offsets=[(0, END)], commits=[0], slot=END, transactions=both)
    outcome = judged(cdc.bounded_input_reliance, AHEAD, went_on)
    assert not outcome.ok and "losing (0/64, 0/C8]" in outcome.message


def test_checkpoint_validates_names_an_offset_log_that_goes_back():
    back = observed(3, offsets=[(0, END), (1, FIRST)], commits=[0, 1], table=[(1, "a")])
    outcome = judged(cdc.checkpoint_validates, ONE, back)
    assert not outcome.ok and outcome.message.startswith("monotone")


def test_a_hard_case_the_trial_did_not_show_stops_the_run():
    """A SIGKILL the trial did not see (the trial itself stops the run first: `spark_impl/cdc/trial.py`)."""
    crash = history(*txn(1, "a"), ("trigger", {"fault": "after_offsets", "kill": True}), ("restart", {}))
    assert "crash after_offsets (SIGKILL)" in cdc.events(crash)
    not_killed = observed(3, offsets=[(0, END)], commits=[0], table=[(1, "a")]) | observed(
        4, offsets=[(0, END)], commits=[0], table=[(1, "a")]
    )
    with pytest.raises(InfrastructureError, match=r"crash after_offsets \(SIGKILL\)"):
        cdc._require_observed(crash, not_killed)
    killed = not_killed | {(3, "killed"): frozenset({("after_offsets",)})}
    assert "crash after_offsets (SIGKILL)" in cdc.observed_events(killed)


def test_a_hard_case_a_source_keeping_the_protocol_shows_is_a_failure_when_not_shown():
    crash = history(*txn(1, "a"), ("trigger", {"fault": "after_offsets"}), ("restart", {}))
    never = observed(3, offsets=[(0, FIRST)], commits=[0]) | observed(4, offsets=[(0, FIRST)], commits=[0])
    outcome = cdc._require_observed(crash, never)
    assert not outcome.ok and "the crash point after_offsets never fired" in outcome.message


def test_a_crash_with_nothing_new_is_not_a_hard_case():
    assert cdc.events(history(*txn(1, "a"), ("trigger", {}), ("trigger", {"fault": "after_sink"}))) == []


def test_the_directed_histories_reach_every_required_case_and_the_model_reads_them():
    from frontier_harness.properties.engine.source import RandomSource

    suite = cdc.SUITE
    reached = set()
    for draw in strategies.directed().values():
        h = draw(RandomSource(0), "total")
        committed(h)
        reached |= set(cdc.events(h))
    assert set(suite.required_events) <= reached


def test_a_history_the_model_rejects_is_never_run():
    bad = history(("write", {"session": 0, "op": "insert", "key": 1, "value": "a"}), ("trigger", {}))

    class Never:
        def observe_cdc(self, domain, histories):
            raise AssertionError("ran a history the model rejects")

    [outcome] = cdc.SUITE.property("exactly_once").check(Never(), [bad])
    assert outcome.rejected and "no transaction is open in session 0" in outcome.message


def test_a_query_that_failed_fails_every_property():
    failed = GOOD | {(3, "error"): frozenset({("StreamingQueryException", "Traceback ... ValueError: boom")})}

    class Failing:
        def observe_cdc(self, domain, histories):
            return [failed for _ in histories]

    for prop in cdc.SUITE.properties[:4]:
        [outcome] = prop.check(Failing(), [ONE])
        assert not outcome.ok and outcome.message.startswith("the query failed: Traceback"), prop.name


def test_a_jobs_read_that_failed_fails_every_property_saying_so():
    read = ("the job's read failed", "read(spark) raised OSError: disk\nTraceback ... OSError: disk")
    failed = GOOD | {(3, "error"): frozenset({read})}

    class Failing:
        def observe_cdc(self, domain, histories):
            return [failed for _ in histories]

    for prop in cdc.SUITE.properties[:4]:
        [outcome] = prop.check(Failing(), [ONE])
        assert not outcome.ok and outcome.message.startswith(
            "the job's read failed: read(spark) raised OSError"
        )
