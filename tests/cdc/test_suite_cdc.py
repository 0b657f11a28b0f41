"""The cdc suite on Spark against a real PostgreSQL: the correct source holds under `ci` with every hard
case observed, each planted bug is caught through the suite's own search and shrunk, a user's `--job`
over the CDC source is judged (an upsert holds, an append writer is caught), and the checkpoint a SIGKILLed
driver left validates against its slot."""

from __future__ import annotations

import time

import pytest

from frontier_harness.properties.checks.cdc import cdc
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

SUITE = get_suite("cdc")
CI = PROFILES["ci"]


def _run(impl, impl_name: str, props: tuple[str, ...] | None = None):
    import attrs

    suite = (
        SUITE if props is None else attrs.evolve(SUITE, properties=tuple(SUITE.property(p) for p in props))
    )
    started, first = time.perf_counter(), []
    result = run_suite(
        SuiteRequest(suite, impl, impl_name, CI, 0, found=lambda cx, event: first.append(time.perf_counter()))
    )
    return result, (first[0] - started if first else None)


@pytest.mark.slow  # the whole ci search over Postgres: minutes
@pytest.mark.spark
def test_the_correct_source_holds_under_ci_with_every_hard_case_observed(spark_session, postgres_cluster):
    from frontier_harness.properties.adapters.spark import SparkImplementation

    result, _ = _run(SparkImplementation(), "spark")
    failed = [(r.property, r.failure.message) for r in result.results if r.failure is not None]
    assert not failed, failed
    assert result.missing_events == (), result.missing_events
    reached = {e for r in result.results for e in r.events}
    assert set(SUITE.required_events) <= reached
    print("cdc ci:", [(r.property, r.examples, round(r.seconds)) for r in result.results])


PLANTED = [
    # the offset is just past the newest change's LSN: a batch ends where no transaction does
    pytest.param(
        "offsets_from_change_lsns",
        "remap_atomic",
        ("where no transaction ends",),
        id="change_lsns",
    ),
    # a batch cut after 50 rows: the large transaction is split. The directed histories run shortest first,
    # and the first this source fails is the restart after the slot moved past its checkpoint, which it let
    # through (its `newest` and `rows_in` never ask `_resumable`): transaction 0 is lost from batch 0,
    # or the restart is named as not refused
    pytest.param(
        "batch_ends_inside_a_transaction",
        "remap_atomic",
        (
            "where no transaction ends",
            "the sink holds none of its rows",
            "the slot moved past the checkpoint was not refused",
        ),
        id="cut",
        marks=pytest.mark.slow,
    ),
    # the slot advanced when the batch is read: a crash after the offsets leaves it past the checkpoint
    pytest.param(
        "slot_advanced_at_read",
        "bounded_input_reliance",
        ("is past the durable end",),
        id="eager",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.spark
@pytest.mark.parametrize("factory,prop,found", PLANTED)
def test_a_planted_bug_is_caught_through_the_search_and_shrunk(
    factory, prop, found, spark_session, postgres_cluster, tmp_path
):
    from tests import planted_cdc

    result, first = _run(getattr(planted_cdc, factory)(), f"tests.planted_cdc:{factory}", (prop,))
    [failure] = [r.failure for r in result.results if r.failure is not None]
    assert any(text in failure.message for text in found), failure.message
    print(factory, "shrunk to", len(failure.history.actions), "actions; first file after", round(first), "s")
    assert len(failure.history.actions) <= 12, failure.history
    path = counterexample.write(failure, tmp_path)
    assert main(["replay", str(path), "--impl", f"tests.planted_cdc:{factory}"]) == 1


@pytest.mark.slow
@pytest.mark.nightly  # .ci/run leaves it to the nightly run (CI's 90 minutes: docs/claims.md)
@pytest.mark.spark
def test_an_append_writer_job_is_caught_doubling_a_re_run_batch(spark_session, postgres_cluster, tmp_path):
    from frontier_harness.properties.adapters.job import load_suite_job

    impl = load_suite_job("cdc", "tests.jobs.cdc:append_diffs")
    result, first = _run(impl, impl.name, ("exactly_once",))
    [failure] = [r.failure for r in result.results if r.failure is not None]
    assert "unexpected" in failure.message, failure.message
    assert any(a.args.get("fault") == "after_sink" for a in failure.history.actions), failure.history
    print(
        "append_diffs shrunk to", len(failure.history.actions), "actions; first file after", round(first), "s"
    )
    path = counterexample.write(failure, tmp_path)
    assert counterexample.read(path).impl == "cdc-job:tests.jobs.cdc:append_diffs"
    assert main(["replay", str(path)]) == 1


@pytest.mark.spark
def test_a_writer_idempotent_only_in_memory_is_caught_after_a_plain_restart(spark_session, postgres_cluster):
    """A restart of a cdc trial's query runs in a Python process that never ran the job: a writer that
    skips the batch ids a helper (imported inside `write`) remembers appends the batch re-run after
    `after_sink` (an exception, not a SIGKILL) a second time."""
    from frontier_harness.properties.adapters.job import load_suite_job
    from frontier_harness.properties.checks.cdc.strategies import cdc as strategies
    from frontier_harness.properties.engine.history import History
    from frontier_harness.properties.engine.source import RandomSource

    state = strategies.CdcState()
    actions = (
        *strategies.transaction(RandomSource(0), state),
        strategies.crash("after_sink"),
        strategies.RESTART,
    )
    impl = load_suite_job("cdc", "tests.jobs.cdc:append_unless_seen_lazily")
    [outcome] = SUITE.property("exactly_once").check(impl, [History("total", actions)])
    assert not outcome.ok and "unexpected" in outcome.message, outcome.message


@pytest.mark.slow
@pytest.mark.spark
def test_the_upsert_example_job_holds_with_every_hard_case(spark_session, postgres_cluster):
    from frontier_harness.properties.adapters.job import load_suite_job

    impl = load_suite_job("cdc", "frontier_harness.streaming_job_example.cdc_upsert:factory")
    result, _ = _run(impl, impl.name)
    failed = [(r.property, r.failure.message) for r in result.results if r.failure is not None]
    assert not failed, failed
    assert result.missing_events == (), result.missing_events


@pytest.mark.spark
def test_the_checkpoint_a_crash_left_validates_and_its_slot_agrees_until_moved_ahead(
    spark_session, postgres_cluster, tmp_path, capsys
):
    """A real trial's checkpoint (a crash after the offsets, a restart; then the slot moved past it while
    the query is down): `validate-checkpoint` holds, `--slot` agrees, then exits 1 naming the range."""
    import json

    from frontier_harness.properties.checks.cdc.strategies import cdc as strategies
    from frontier_harness.properties.engine.source import RandomSource
    from frontier_harness.spark_impl.cdc.trial import run_trials

    ahead = strategies._slot_ahead(RandomSource(0), "total")
    [obs] = run_trials([ahead], keep=tmp_path)
    outcome = cdc.all_laws(ahead, obs, cdc.ObservedTrial(ahead, obs, cdc.committed(ahead)))
    assert outcome.ok, outcome.message
    query = tmp_path / "0"
    config = json.loads((query / "upstream" / "source.json").read_text())
    checkpoint, slot = str(query / "checkpoint"), ["--slot", config["slot"], "--dsn", config["dsn"]]
    assert main(["validate-checkpoint", checkpoint]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["validate-checkpoint", checkpoint, *slot]) == 1
    line = capsys.readouterr().out.strip()
    assert "is ahead of the checkpoint" in line and "are gone upstream" in line, line


@pytest.mark.spark
def test_a_slot_moved_before_the_first_batch_committed_is_refused_from_where_the_stream_began(
    spark_session, postgres_cluster, tmp_path
):
    """Batch 0's offsets are logged, the driver crashes, more is committed and the slot is moved past it while
    the query is down. Spark asks the source where it began again at every start until batch 0 commits: the
    source answers what it answered first (kept in its journal), so the restart is refused naming every
    change lost, and batch 0 does not commit empty, its transaction lost unnoticed."""
    from frontier_harness.model.vocabulary.streaming import CrashPoint
    from frontier_harness.properties.checks.cdc.strategies import cdc as strategies
    from frontier_harness.properties.engine.history import History
    from frontier_harness.properties.engine.source import RandomSource
    from frontier_harness.spark_impl.cdc.trial import run_trials

    source, state = RandomSource(0), strategies.CdcState()
    actions = strategies.transaction(source, state) + [strategies.crash(CrashPoint.AFTER_OFFSETS)]
    ahead = History("total", (*actions, *strategies.transaction(source, state), strategies.SLOT_AHEAD))
    [obs] = run_trials([ahead], keep=tmp_path)
    trial = cdc.ObservedTrial(ahead, obs, cdc.committed(ahead))
    outcome = cdc.all_laws(ahead, obs, trial)
    assert outcome.ok, outcome.message
    last = max(step for step, _ in obs)
    [(_, refused)] = obs[(last, "error")]
    began = sorted(obs[(trial.steps[0], "starts")])[0][3]
    assert f"the changes in ({cdc.lsn_text(began)}, " in refused and not obs[(last, "commits")], refused
