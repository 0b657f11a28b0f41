"""The first answer first (issue 51): under `--fail-fast` the first failing trial of any property stops every
lane of the run, between its trials and between its histories ("stopped (fail-fast)", never "held"), and
every run prints a failure the moment its property ends, before the run's table."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Sequence

import attrs
import pytest

from frontier_harness.properties.checks.time.strategies.collections import draw_collection_history
from frontier_harness.properties.cli import run as runs
from frontier_harness.properties.cli.main import main
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation, Speed
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
from frontier_harness.properties.engine.stop import Stop
from frontier_harness.properties.engine.suite import Outcome, Property, Suite, observations
from frontier_harness.properties.engine.trials import in_waves
from frontier_harness.properties.engine.verdict import Verdict
from tests.helpers import QUICK

WAVE = 2  # trials a wave after the first (of one): the flag is read after each trial, a wave's outcomes come together
TRIALS = attrs.evolve(
    QUICK, batched_screening_histories=40, screening_batch=40, screen_first=True, shrink_seconds=0
)


class Queries(Implementation):
    """A planted trial implementation: each history is a "query" whose observation is the number of its
    actions; `observed` counts the queries run, `began` is set as a wave begins (after the first `free` ones)
    and `waits` blocks it until it is set (the slow lane's: the failing lane waits for it to begin, however
    the threads are scheduled)."""

    name = "queries"
    speed = Speed.BATCHED  # screened first: one lane, its trials in the order drawn

    def __init__(
        self, waits: threading.Event | None = None, began: threading.Event | None = None, free: int = 0
    ):
        self.observed = 0
        self.waits, self.began, self.free = waits, began, free

    def observe_queries(self, domain, histories: Sequence[History]) -> list[dict]:
        self.free -= 1
        if self.free >= 0:
            self.observed += len(histories)
            return [{(0, "actions"): len(h.actions)} for h in histories]
        if self.began is not None:
            self.began.set()
        if self.waits is not None:
            assert self.waits.wait(timeout=60), "the other lane never got where this one waits for it"
        self.observed += len(histories)
        return [{(0, "actions"): len(h.actions)} for h in histories]


def judged_by(rule):
    """A trial check: waves of `WAVE` trials, each judged by `rule` on its (shared) observation."""

    def check(impl, histories):
        def wave(batch):
            return [rule(obs) for obs in observations(impl, "observe_queries", batch)]

        return in_waves(histories, WAVE, wave)

    return check


HOLDS = judged_by(lambda obs: Outcome(ok=True))
FAILS = judged_by(lambda obs: Outcome(ok=False, message="planted: every trial breaks it"))


def trial_suite(*checks, name: str = "queries") -> Suite:
    properties = tuple(Property(f"p{i}", "", draw_collection_history, c) for i, c in enumerate(checks))
    return Suite(name, "", properties, "queries", domains=("total",), calls=("observe_queries",))


def test_a_failing_trial_suite_stops_a_slow_lane_running_beside_it():
    """Two requests of one run, in two threads, sharing its `Stop`: the slow lane's second wave (of two trials,
    after a first of one) waits until the trial suite has found its failure (on its first trial), which
    waits for that wave to begin; the slow lane then ends at the first trial of that wave, not after it."""
    stop, announced, began = Stop(), threading.Event(), threading.Event()
    slow_impl, fast_impl = Queries(waits=announced, began=began, free=1), Queries(waits=began)
    slow = {}

    def run_slow():
        request = SuiteRequest(
            trial_suite(HOLDS, name="slow"), slow_impl, "queries", TRIALS, 0, fail_fast=True, stop=stop
        )
        slow["result"] = run_suite(request)

    beside = threading.Thread(target=run_slow)
    beside.start()
    found = lambda cx, event: announced.set()  # noqa: E731
    request = SuiteRequest(trial_suite(FAILS), fast_impl, "queries", TRIALS, 0, found=found, stop=stop)
    failing = run_suite(request)
    beside.join(timeout=120)
    assert not beside.is_alive(), "the slow lane did not stop"

    (failed,) = failing.results
    assert failed.verdict is Verdict.FAILED and failed.failure is not None
    (stopped,) = slow["result"].results
    assert stopped.verdict is Verdict.STOPPED and not stopped.passed
    # the lane ran fewer trials than it would have: its first two waves' queries (a history drawn twice is
    # observed once), read up to the second trial, the first of the second wave: not to the wave's end
    assert stopped.examples == 2 and slow_impl.observed <= 1 + WAVE
    total = TRIALS.batched_screening_histories
    assert stopped.reason == f"after 2 of {total} trials: another lane failed first"


def test_a_trial_that_breaks_a_later_property_stops_the_first_at_that_trial():
    """The suite's properties share each trial: under `--fail-fast` the first property's run judges each
    trial by the others, so a failure of the second on trial 1 ends the first after trial 1 (not after all
    its trials), and the second runs and reports it; without `--fail-fast` every trial runs."""
    impl = Queries()
    result = run_suite(SuiteRequest(trial_suite(HOLDS, FAILS), impl, "queries", TRIALS, 0, fail_fast=True))
    first, second = result.results
    assert (first.verdict, first.examples, second.verdict) == (Verdict.STOPPED, 1, Verdict.FAILED)
    assert (
        impl.observed == 1 + 1
    )  # the first wave's one query, judged by both properties; the shrunk failure alone
    everything = run_suite(SuiteRequest(trial_suite(HOLDS, FAILS), Queries(), "queries", TRIALS, 0))
    assert [r.verdict for r in everything.results] == [Verdict.HELD, Verdict.FAILED]
    assert everything.results[0].examples == TRIALS.batched_screening_histories


def _trial_suites():
    """Every trial suite of more than one property as `check` runs it: the registry's, and the stateful
    suite scaled to a processor's plan and to a stream-stream join's (`--job`)."""
    from frontier_harness.model.event_time.join import JoinPlan, JoinType, StreamJoin, TimeRange
    from frontier_harness.model.event_time.stateful import StatefulPlan
    from frontier_harness.properties.checks.registry import get_suite

    s = 1_000
    stateful = get_suite("stateful")
    processor = StatefulPlan("processor", (5 * s,), None, ("key",), "append", 5 * s, time_mode="event_time")
    join = JoinPlan(StreamJoin(JoinType.INNER, TimeRange(0, 10 * s)), (5 * s, 5 * s), "append", ("ld", "rd"))
    return {
        "streaming": (get_suite("streaming"), None),
        "cdc": (get_suite("cdc"), None),
        "stateful": (stateful, stateful.plan),
        "stateful, a processor": (stateful.scaled_to(processor), processor),
        "stateful, a join": (stateful.scaled_to(join), join),
    }


@pytest.mark.parametrize("name", list(_trial_suites()))
def test_every_property_of_a_trial_suite_judges_the_first_ones_trials_under_fail_fast(name):
    """Each property `check --profile ci` runs after the first draws the first's histories (an equal
    `HistoryDraw`), so under `--fail-fast` the first lane judges each of its trials by all of them
    (`runner._peers`): a job whose plan alone breaks `state_bounded` stopped after its first trial, not
    after `exactly_once`'s 74 (224 s -> 33 s). A draw made anew for each property (a lambda) has no peers."""
    from types import SimpleNamespace

    from frontier_harness.properties.engine.runner import _peers

    suite, plan = _trial_suites()[name]
    impl = SimpleNamespace(plan=plan)
    runs = [
        (p, d)
        for p in suite.properties
        if p.runs_in("ci") and p.not_applicable(impl) is None
        for d in suite.domains
    ]
    (first, domain), *later = runs
    assert len(later) >= 2, runs
    assert [p.name for p in _peers(first, domain, later, impl)] == [p.name for p, _ in later]
    # `thorough` adds a property whose histories SIGKILL the driver: its draw differs, it is no peer
    thorough = [(p, d) for p in suite.properties if p.runs_in("thorough") for d in suite.domains]
    killed = [p.name for p, _ in thorough if p.draw != first.draw]
    assert killed == ["laws_under_sigkill"], killed
    assert not set(killed) & {p.name for p in _peers(first, domain, thorough, impl)}


def test_a_stopped_lane_is_shown_stopped_never_held():
    from frontier_harness.properties.engine.report import verdict_text
    from frontier_harness.properties.engine.results import PropertyResult

    r = PropertyResult("s", "p", "total", 12, 1.0, Counter(), unit="trials", stopped="after 12 of 75 trials")
    assert r.verdict is Verdict.STOPPED and not r.passed
    assert "stopped (fail-fast): after 12 of 75 trials" in verdict_text(r)


PLANTED = "tests.planted:model_keeps_zero_diffs"


@pytest.mark.parametrize("fail_fast", [False, True], ids=["every lane", "--fail-fast"])
def test_check_prints_a_failure_when_its_property_ends_before_the_table(
    tmp_path, capsys, monkeypatch, fail_fast
):
    """`check` with a failing lane in the second process (collections against a planted bug) beside a slow
    one here (mutable_antichain, a million histories: minutes): the failure is printed as its property
    ends, before the table; under `--fail-fast` the lane here stops, having checked fewer histories than
    it would have, never held, and the run's verdict is the failure."""
    argv = ["check", "--suite", "collections", "--suite", "mutable_antichain", "--domain", "total"]
    argv += ["--profile", "dev", "--impl", PLANTED, "--out", str(tmp_path), "--seed", "3"]
    # shared by the two processes, this one taking the first (mutable_antichain) as the child starts
    monkeypatch.setattr(runs, "shared_pairings", lambda args, planned: [1, 0])
    if not fail_fast:
        assert main([*argv, "--screening", "200"]) == 1
    else:
        assert main([*argv, "--screening", "1000000", "--fail-fast"]) == 1
    out = capsys.readouterr().out
    (written,) = tmp_path.glob("collections*.itf.json")
    early = out.index("FAILED collections.")
    assert early < out.index("frontier-harness check")  # the table's title
    assert f"{written}" in out[early : out.index("\n", early)]
    assert "counterexample found" in out[:early]
    if fail_fast:
        here = [line for line in out.splitlines() if line.startswith("mutable_antichain.")]
        first = here[0].split(": ", 1)[1]  # N histories in S s, stopped (fail-fast): after N of M histories
        checked, total = map(int, re.search(r"after (\d+) of (\d+) histories", first).groups())
        assert "stopped (fail-fast)" in first and 0 < checked < total, out
        assert all("held" not in line for line in here), out
