"""A user's streaming job under the crash trials (`--job`): the oracle on written observations, jobs
written as a user would on real trials, and the bad jobs refused in one line."""

from __future__ import annotations

import attrs
import pytest

from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.streaming import streaming, streaming_job
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.engine.counterexample import Counterexample
from frontier_harness.properties.engine.suite import observations, shared_observations
from tests.test_suite_streaming import COMPACT, RESTART, TO_TWO_DIGITS, history, observed, produce, trigger

SUITE = get_suite("streaming")
P0 = ((0, 0, 1), (1, 2147483647, 0))


def row(data: str, partition: int = 0, offset: int = 0, **more) -> tuple:
    return tuple(sorted({"data": data, "partition": partition, "offset": offset, **more}.items()))


ONE = history(produce("r0"), trigger())
OUTPUTS = {(("r0", 0, 0),): {row("r0"): 1}}


def test_the_oracle_is_transform_over_the_committed_batches():
    good = observed(1, offsets=[(0, P0)], commits=[0], job_rows=[(row("r0"), 1)])
    assert streaming_job.job_exactly_once(ONE, good, OUTPUTS).ok
    twice = observed(1, offsets=[(0, P0)], commits=[0], job_rows=[(row("r0"), 2)])
    outcome = streaming_job.job_exactly_once(ONE, twice, OUTPUTS)
    assert not outcome.ok and outcome.step == 1
    assert "doubled [{data='r0', offset=0, partition=0} (batch 0, held 2x, expected 1x)]" in outcome.message
    lost = observed(1, offsets=[(0, P0)], commits=[0], job_rows=[])
    assert (
        "missing [{data='r0', offset=0, partition=0} (batch 0)]"
        in streaming_job.job_exactly_once(ONE, lost, OUTPUTS).message
    )


def test_a_batch_id_the_writer_kept_is_compared_too():
    right = observed(1, offsets=[(0, P0)], commits=[0], job_rows=[(row("r0", batch_id=0), 1)])
    assert streaming_job.job_exactly_once(ONE, right, OUTPUTS).ok
    wrong = observed(1, offsets=[(0, P0)], commits=[0], job_rows=[(row("r0", batch_id=7), 1)])
    outcome = streaming_job.job_exactly_once(ONE, wrong, OUTPUTS)
    assert "missing" in outcome.message and "unexpected [{batch_id=7" in outcome.message


def test_an_uncommitted_batch_is_not_expected_and_every_record_is_at_the_end():
    written = observed(1, offsets=[(0, P0)], commits=[], job_rows=[(row("r0"), 1)])
    outcome = streaming_job.job_exactly_once(ONE, written, OUTPUTS)
    assert "unexpected [{data='r0', offset=0, partition=0} (batch 0)]" in outcome.message
    assert "unbound ['r0']" in streaming_job.job_exactly_once(ONE, observed(2), OUTPUTS).message


# Every crash point (the user's writer throughout: the sink choice does not apply), a new partition,
# a restart after upstream compaction, both triggers.
COVERING = [
    history(
        ("query", {"sink": "files", "trigger": "processingTime"}),
        *(produce("r0"), trigger("after_sink"), produce("r1", 1), RESTART),
        *(produce("r2"), trigger("before_offsets"), RESTART),
    ),
    history(
        ("query", {"sink": "shard", "trigger": "availableNow"}),
        *(produce("r0"), trigger(), produce("r1", 1), trigger("after_offsets"), COMPACT, RESTART),
    ),
]
APPEND = (produce("r0"), trigger("after_sink"), RESTART)
DROPS = (produce("r0"), produce("r1", 1), trigger())


@pytest.mark.spark
def test_the_idempotent_example_holds_at_every_crash_point(spark_session):
    """The worked example: overwrite of a per-batch directory, batch ids read back and compared; and a driver
    of its own SIGKILLed at each point (the suite's directed histories), each kill counted only as the trial
    saw it (the driver's marker at the point, then its death by SIGKILL)."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.engine.source import RandomSource

    impl = load_job("frontier_harness.streaming_job_example:factory")
    directed = streaming.directed_with_kills(False)
    kills = [directed[case](RandomSource(0), "partitioned") for case in streaming.KILLED]
    reached: set[str] = set()
    with shared_observations():  # one trial a history, judged by the three properties, as `check` runs them
        for prop in SUITE.properties[:3]:
            outcomes = prop.check(impl, [*COVERING, TO_TWO_DIGITS, *kills])
            failed = [o.message for o in outcomes if not o.ok]
            assert not failed, (prop.name, failed)
            reached |= {e for o in outcomes for e in o.reached or ()}  # what the trials showed
    assert set(SUITE.required_events) <= reached, set(SUITE.required_events) - reached


@pytest.mark.spark
def test_a_job_with_a_transform_holds(spark_session):
    """A transform (new, renamed and filtered columns: `R3` is dropped) and a writer that skips a batch id
    it already holds, through the re-run after `after_sink`."""
    from frontier_harness.properties.adapters.job import load_job

    rerun = history(produce("r3"), produce("r0"), trigger("after_sink"), produce("r1", 1), RESTART)
    [outcome] = SUITE.property("exactly_once").check(load_job("tests.jobs.user:skip_written"), [rerun])
    assert outcome.ok, outcome.message


@pytest.mark.spark
@pytest.mark.parametrize(
    "job,actions,found",
    [
        ("tests.jobs.user:append", APPEND, "doubled [{data='r0', offset=0, partition=0} (batch 0, held 2x"),
        ("tests.jobs.user:drops_partition", DROPS, "missing [{batch_id=0, data='r1', offset=0, partition=1}"),
    ],
    ids=["append", "drops_partition"],
)
def test_a_wrong_writer_is_caught_and_replays_with_job(job, actions, found, spark_session, tmp_path):
    """The docs' `mode("append")` writer doubles the batch re-run after `after_sink`; a writer that drops
    partition 1 loses its rows. Each counterexample replays on the CLI with `--job` (exit 1), and
    without it when the file records the job."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.engine import counterexample

    small = history(*actions)
    outcome = SUITE.property("exactly_once").check(load_job(job), [small])[0]
    assert not outcome.ok and found in outcome.message, outcome.message
    cx = Counterexample("streaming", "exactly_once", small, "spark", outcome.message, outcome.step)
    path = counterexample.write(cx, tmp_path)
    assert main(["replay", str(path), "--job", job]) == 1
    recorded = counterexample.write(attrs.evolve(cx, job=job), tmp_path / "recorded")
    assert counterexample.read(recorded).job == job
    assert main(["replay", str(recorded)]) == 1


@pytest.mark.spark
def test_an_exception_in_write_fails_the_job_with_its_traceback(spark_session):
    from frontier_harness.properties.adapters.job import load_job

    outcome = SUITE.property("exactly_once").check(
        load_job("tests.jobs.bad:failing_writer"),
        [history(produce("r0"), trigger(), produce("r1"), trigger())],
    )[0]
    assert not outcome.ok and outcome.step == 3
    assert 'tests/jobs/bad.py", line' in outcome.message
    assert "OSError: disk full while writing batch 1" in outcome.message
    assert "pyspark" not in outcome.message


@pytest.mark.spark
def test_an_exception_in_read_fails_the_job_with_its_traceback(spark_session):
    """As an exception in `write` does: the implementation raised on a valid history. Whether a crash came
    first or not, the shrunk history and the user's own frame tell which."""
    from frontier_harness.properties.adapters.job import load_job

    outcome = SUITE.property("exactly_once").check(
        load_job("tests.jobs.bad:read_raises_once_written"), [history(produce("r0"), trigger())]
    )[0]
    assert not outcome.ok and outcome.step == 1, outcome.message
    assert outcome.message.startswith("the job's read failed: read(spark) raised AnalysisException"), (
        outcome.message
    )
    assert 'tests/jobs/bad.py", line' in outcome.message and 'select("total")' in outcome.message, (
        outcome.message
    )
    assert "pyspark/" not in outcome.message


def test_a_frame_that_resolves_only_when_its_schema_is_asked_is_the_jobs_failure():
    """As under Spark Connect, which resolves a DataFrame only when its columns are asked (by `read_rows`, after
    `read` returned): the job's failure, named, never the harness's."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import DataFrame

    from frontier_harness.spark_impl.streaming.job import read_rows

    class Unresolved(DataFrame):
        def __new__(cls) -> Unresolved:  # no plan: only its columns are asked
            return object.__new__(cls)

        def __init__(self) -> None:
            pass

        @property
        def columns(self) -> list[str]:  # type: ignore[override]
            raise AnalysisException("[UNRESOLVED_COLUMN] `total` cannot be resolved")

    class Job:
        def read(self, spark: object) -> DataFrame:
            return Unresolved()

    [why] = read_rows(None, [Job()])
    assert why == (
        "read(spark) returned a DataFrame that does not resolve: "
        "AnalysisException: [UNRESOLVED_COLUMN] `total` cannot be resolved"
    ), why


BAD = [
    ("tests.jobs.nope:factory", "cannot import 'factory' from 'tests.jobs.nope'"),
    ("tests.jobs.user:nope", "cannot import 'nope' from 'tests.jobs.user'"),
    ("tests.jobs.bad:no_read", "WriteOnly has no read method"),
    ("tests.jobs.bad:read_returns_list", "read(spark) returned a list: expected a DataFrame or None"),
    (
        "tests.jobs.bad:aggregating",
        "transform is not row-wise: its logical plan has an aggregation (use select, filter, withColumn; "
        "a stateful job runs in --suite stateful)",
    ),
    ("tests.jobs.bad:deduplicating", "transform is not row-wise: its logical plan has a deduplication"),
    ("tests.jobs.bad:joining", "transform is not row-wise: its logical plan has a join"),
]


@pytest.mark.spark
@pytest.mark.parametrize("job,problem", BAD, ids=[b[0].split(":")[1] for b in BAD])
def test_a_bad_job_is_refused_in_one_line(job, problem, spark_session, capsys):
    assert main(["check", "--suite", "streaming", "--job", job]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"error: --job {job}: ") and problem in out, out
    assert len(out.splitlines()) == 1, out


def test_job_applies_to_the_streaming_suite_only(capsys):
    assert main(["check", "--suite", "collections", "--job", "tests.jobs.user:append"]) == 2
    assert "--job applies to the streaming, stateful and cdc suites" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.spark
def test_sigkill_of_the_driver_runs_the_job_there_and_the_append_writer_doubles(spark_session):
    """The factory runs in the SIGKILLed driver too: the example holds through a kill between its offsets
    and its write; the append writer's batch, killed after its write, is written again by the restart.
    (A kill at every point is `test_suite_streaming`'s SIGKILL test; the example meets every point in
    process above: each kill here is a driver's JVM start.)"""
    from frontier_harness.properties.adapters.job import load_job

    killed = history(
        ("query", {"trigger": "processingTime"}),
        *(produce("r0"), produce("r1", 1), trigger("after_offsets", kill=True), COMPACT, RESTART),
    )
    impl = load_job("frontier_harness.streaming_job_example:factory")
    with shared_observations():  # the check below judges these observations: no second run
        [obs] = observations(impl, "observe_streaming", [killed])
        outcome = SUITE.property("laws_under_sigkill").check(impl, [killed])[0]
    assert {r for (_, label), rows in obs.items() if label == "crash" for r in rows} == {("after_offsets",)}
    assert outcome.ok, outcome.message
    doubled = history(produce("r0"), trigger("after_sink", kill=True), RESTART)
    outcome = SUITE.property("laws_under_sigkill").check(load_job("tests.jobs.user:append"), [doubled])[0]
    assert not outcome.ok and "doubled" in outcome.message, outcome.message


@pytest.mark.slow
@pytest.mark.spark
def test_laws_under_sigkill_catch_the_append_writer_through_the_suites_own_search(spark_session, tmp_path):
    """`laws_under_sigkill` (thorough): its histories crash by SIGKILL only, each killed driver a JVM of its
    own; the suite's own search (its directed kill at each point first) finds the append writer's batch
    written twice after a kill past its write, shrunk, every kill it counts observed, and the file replays."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.streaming import streaming
    from frontier_harness.properties.engine import counterexample
    from frontier_harness.properties.engine.profiles import PROFILES
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    impl = load_job("tests.jobs.user:append")
    suite = attrs.evolve(SUITE, properties=(SUITE.property("laws_under_sigkill"),))
    result = run_suite(SuiteRequest(suite, impl, impl.name, PROFILES["thorough"], 0))
    [run] = result.results
    assert run.failure is not None and "doubled" in run.failure.message, run
    print(len(run.failure.history.actions), "actions:", run.failure.message, run.failure.history.actions)
    assert len(run.failure.history.actions) <= 3, (
        run.failure.history
    )  # 2: a record, its batch killed after its write
    assert any(a.args.get("kill") for a in run.failure.history.actions), run.failure.history
    assert set(streaming.KILLED) & set(run.events), run.events
    assert main(["replay", str(counterexample.write(run.failure, tmp_path))]) == 1


@pytest.mark.spark
def test_the_pytest_fixture_takes_a_job(spark_session, tmp_path):
    from frontier_harness.properties.cli.pytest_plugin import Harness
    from frontier_harness.properties.engine.errors import ImplementationError

    with pytest.raises(ImplementationError, match="transform is not row-wise"):
        Harness("ci", 0, tmp_path).check("streaming", job="tests.jobs.bad:aggregating")


@pytest.mark.slow
@pytest.mark.spark
def test_an_idempotent_job_with_a_row_wise_transform_holds_under_the_default_profile(
    spark_session, tmp_path, capsys
):
    """Before, this exited 1 after 4 trials, every property held: "crash before_offsets", "crash
    after_offsets" and "restart after upstream compaction" were never reached. The run's first trials are
    now directed at each hard case (`Property.directed`), and `dev` reaches them all."""
    argv = ["check", "--suite", "streaming", "--job", "tests.jobs.user:skip_written", "--out", str(tmp_path)]
    assert main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "never reached" not in out and "not shown" not in out, out


@pytest.mark.spark
def test_the_docs_append_writer_is_caught_small_by_the_suites_own_search_and_replays(spark_session, tmp_path):
    """No hand-written history: the suite's run (`ci`, its directed trials first: a crash at each point, and
    a driver of its own SIGKILLed at each) finds the doubled batch and shrinks it to four actions, and the
    file replays (each kill counted as the trial saw it: `test_the_idempotent_example_holds_at_every_crash_point`)."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.engine import counterexample
    from frontier_harness.properties.engine.profiles import PROFILES
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    impl = load_job("tests.jobs.user:append")
    suite = attrs.evolve(SUITE, properties=(SUITE.property("exactly_once"),))
    result = run_suite(
        SuiteRequest(suite, impl, impl.name, attrs.evolve(PROFILES["ci"], shrink_seconds=900), 0)
    )
    [run] = result.results
    assert run.failure is not None and "doubled" in run.failure.message, run
    assert len(run.failure.history.actions) <= 4, run.failure.history
    path = counterexample.write(run.failure, tmp_path)
    assert main(["replay", str(path)]) == 1


@pytest.mark.spark
@pytest.mark.parametrize("job", ["skip_seen", "skip_seen_lazily"])
def test_a_writer_idempotent_only_in_memory_is_caught_after_a_plain_restart(job, spark_session):
    """A restart runs the query in a Python process that never ran the job: a writer that skips the batch
    ids kept in a module-level set, its own or a helper's it imports inside `write`, writes the batch
    re-run after `after_sink` (an exception, not a SIGKILL) a second time."""
    from frontier_harness.properties.adapters.job import load_job

    rerun = history(produce("r0"), trigger("after_sink"), RESTART)
    outcome = SUITE.property("exactly_once").check(load_job(f"tests.jobs.user:{job}"), [rerun])[0]
    assert (
        not outcome.ok and "doubled [{data='r0', offset=0, partition=0} (batch 0, held 2x" in outcome.message
    ), outcome.message


@pytest.mark.spark
def test_a_writer_that_orders_batch_ids_as_text_is_caught_by_the_two_digit_history(spark_session):
    """The suite's history directed at a two-digit batch id (`strategies.streaming.TWO_DIGITS`: a record and
    a trigger for each of batches 0 to 10): a writer that skips every batch id up to the newest it wrote,
    compared as text, skips batch 10 (`"10" <= "9"`), and the trial shows it reached the case."""
    from frontier_harness.properties.adapters.job import load_job
    from frontier_harness.properties.checks.streaming.strategies.streaming import TWO_DIGITS

    [outcome] = SUITE.property("exactly_once").check(
        load_job("tests.jobs.user:newest_by_text"), [TO_TWO_DIGITS]
    )
    assert not outcome.ok and "missing" in outcome.message and "batch 10" in outcome.message, outcome.message
    assert TWO_DIGITS in outcome.reached, outcome.reached


@pytest.mark.slow
@pytest.mark.spark
def test_under_ci_the_writer_idempotent_only_in_memory_is_caught_by_the_suites_own_search(
    spark_session, tmp_path, capsys
):
    """`check --suite streaming --job tests.jobs.user:skip_seen --profile ci` exits 1 with a counterexample
    file: the restart after the crash is a restart, whatever the profile. With `--fail-fast`: the other
    properties' 62 trials each, which cannot fail on this writer, are not the claim."""
    code = main(
        ["check", "--suite", "streaming", "--job", "tests.jobs.user:skip_seen", "--profile", "ci"]
        + ["--fail-fast", "--out", str(tmp_path)]
    )
    assert code == 1, capsys.readouterr().out
    [path] = tmp_path.glob("streaming-*.itf.json")
    cx = counterexample.read(path)
    assert any(a.args.get("fault") == "after_sink" for a in cx.history.actions) and "doubled" in cx.message
