"""The z3 checker: obligations proved, planted bugs refuted with replayable counterexamples,
give-ups reported as such, and the encoding held equal to the model on concrete inputs."""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager

import attrs
import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.catalog import expiration as ex
from frontier_harness.model.catalog.catalog import RefreshAt, RefreshEvery, next_refresh, upper_at
from frontier_harness.model.errors import DataflowExpired
from frontier_harness.model.time.antichain import Antichain
from frontier_harness.model.time.domains import PARTITION_MAX, Partitioned, PartitionedTime, Product
from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.catalog import prove as prove_suite
from frontier_harness.properties.cli import prove as solver_cli
from frontier_harness.properties.engine import counterexample
from frontier_harness.properties.solver import check, lattice, registry
from frontier_harness.properties.solver import encoding as enc
from frontier_harness.properties.solver.encoding import FAITHFUL, NONE, concrete, ite, lift, some
from frontier_harness.properties.solver.realize import realize
from frontier_harness.properties.solver.world import World
from tests.test_model_expiration import scenarios

FAST = settings(max_examples=150, deadline=None, database=None)
OPT = st.one_of(st.none(), st.integers(0, 40))
TIME = st.integers(0, 40)
CLAUSE = st.one_of(
    st.builds(RefreshEvery, st.integers(1, 9), st.integers(0, 12)), st.builds(RefreshAt, st.integers(0, 40))
)
SCHEDULE = st.lists(CLAUSE, max_size=3).map(tuple)


def z(rule: str, *args):
    """A rule of the faithful encoding applied to constants, read back as a Python value."""
    out = getattr(FAITHFUL, rule)(FAITHFUL, *args)
    return concrete(out) if isinstance(out, enc.Opt) else z3.simplify(out)


# ---------------------------------------------------------------- the encoding equals the model


@FAST
@given(TIME, st.integers(0, 9), OPT, OPT)
def test_arithmetic_rules_equal_the_model(start, offset, a, b):
    assert z("replica_expiration", z3.IntVal(start), z3.IntVal(offset)) == ex.replica_expiration(
        start, offset
    )
    assert z("frontier_meet", lift(a), lift(b)) == ex.frontier_meet(a, b)
    assert z("meet_bounds", lift(a), lift(b)) == ex.meet_bounds(a, b)
    assert z("subscribe_bound", lift(a), lift(b)) == ex.subscribe_bound(a, b)
    assert z("dataflow_expiration", lift(a), lift(b)) == ex.dataflow_expiration(a, b)
    assert z("meet_until", lift(a), lift(b)) == ex.meet_until(a, b)
    assert z("step_one_tick", z3.IntVal(start)).as_long() == ex.step_one_tick(start)
    if a is not None and b is not None:
        carried = z("carried_to", z3.IntVal(a), z3.IntVal(b), z3.IntVal(start))
        assert carried.as_long() == ex.carried_to(a, b, start)
        assert z("inputs_bound", z3.IntVal(a), z3.IntVal(b)).as_long() == ex.inputs_bound(a, b)


@FAST
@given(st.lists(OPT, max_size=4))
def test_meet_inputs_equals_the_model(bounds):
    assert concrete(enc.meet_inputs(FAITHFUL, [lift(b) for b in bounds])) == ex.meet_inputs(bounds)


@FAST
@given(st.sampled_from(["kafka", "postgres", "cdc", "load_generator"]), st.booleans(), TIME)
def test_source_bound_equals_the_model(kind, epoch, wall):
    got = z("source_bound", z3.BoolVal(kind == "load_generator"), z3.BoolVal(epoch), z3.IntVal(wall))
    assert got == ex.source_bound(kind, epoch, wall)


@FAST
@given(SCHEDULE, OPT)
def test_refresh_rules_equal_the_model(schedule, bound):
    clauses = tuple(enc.clause(c) for c in schedule)
    assert z("round_up_to_refresh", clauses, lift(bound)) == ex.round_up_to_refresh(schedule, bound)
    if bound is not None:
        assert z("next_refresh", clauses, z3.IntVal(bound)) == next_refresh(schedule, bound)


@FAST
@given(OPT, OPT, TIME)
def test_refusal_equals_check_not_expired(expiration, upper, time_):
    frontier = Antichain.of(ex.TIME, [] if upper is None else [upper])
    try:
        ex.check_not_expired(ex.Dataflow("d", expiration, expiration), frontier, time_)
        raised = False
    except DataflowExpired:
        raised = True
    assert z3.is_true(z("refused", lift(expiration), lift(upper), z3.IntVal(time_))) == raised


@FAST
@given(scenarios(), st.integers(0, 15), st.integers(0, 15))
def test_time_dependence_and_render_equal_the_model_on_catalogs(scenario, render, ahead):
    catalog, feed, *_ = scenario
    wall, seen = render + ahead, ex.seen_at(catalog, feed, render)
    for obj in catalog.objects:
        got = enc.time_dependence(FAITHFUL, catalog, obj.name, wall, seen)
        assert concrete(got) == ex.time_dependence(catalog, obj.name, wall, seen)
        kind = enc.kind_of(obj)
        if kind in enc.DERIVED_KINDS:
            for replica_exp in (None, wall):
                expiration, until = enc.render(FAITHFUL, kind, got, enc.up_to_of(obj), lift(replica_exp))
                flow = ex.render(catalog, obj.name, replica_exp, seen)
                assert (concrete(expiration), concrete(until)) == (flow.expiration, flow.until)


@FAST
@given(scenarios(), st.integers(0, 15), st.integers(0, 15))
def test_the_models_world_satisfies_the_assumptions(scenario, render, ahead):
    """The model's uppers, with skews that never gain on the render, are one world the proofs cover."""
    catalog, feed, *_ = scenario
    world, wall = World(0), render + ahead

    def upper(name, at=wall):
        frontier = upper_at(catalog, feed, name, at)
        return lift(min(frontier) if len(list(frontier)) else None)

    for obj in catalog.objects:
        kind = enc.kind_of(obj)
        if not obj.inputs:
            seen = upper(obj.name, render)
            allowed = world.leaf_upper(kind, z3.IntVal(wall), upper(obj.name), z3.IntVal(render), seen.val)
            assert z3.is_true(z3.simplify(allowed))
        else:
            met = world.meet([upper(i) for i in obj.inputs])
            expected = world.derived_upper(kind, met, enc.schedule_of(obj), enc.up_to_of(obj))
            assert concrete(expected) == concrete(upper(obj.name))


@FAST
@given(st.tuples(TIME, TIME), st.tuples(TIME, TIME))
def test_product_encoding_equals_the_model(x, y):
    d = Product()
    assert z3.is_true(z3.simplify(lattice.product_le(x, y))) == d.le(x, y)
    assert tuple(z3.simplify(v).as_long() for v in lattice.product_join(x, y)) == d.join(x, y)
    assert tuple(z3.simplify(v).as_long() for v in lattice.product_meet(x, y)) == d.meet(x, y)


PTIME = st.builds(
    lambda lo, width, off, top: PartitionedTime(lo, PARTITION_MAX if top else lo + width, off),
    st.integers(0, 6),
    st.integers(0, 6),
    st.integers(0, 9),
    st.booleans(),
)


@FAST
@given(PTIME, PTIME)
def test_partitioned_encoding_equals_the_model(a, b):
    d = Partitioned()
    ka, kb = d.key(a), d.key(b)
    assert z3.is_true(z3.simplify(lattice.partitioned_le(ka, kb))) == d.le(a, b)
    exists, joined = lattice.partitioned_join(ka, kb)
    want = d.join(a, b)
    assert z3.is_true(z3.simplify(exists)) == (want is not None)
    if want is not None:
        assert tuple(z3.simplify(v).as_long() for v in joined) == d.key(want)
    assert tuple(z3.simplify(v).as_long() for v in lattice.partitioned_meet(ka, kb)) == d.key(d.meet(a, b))


# ---------------------------------------------------------------- the obligations


def test_every_obligation_is_proved():
    """How long it takes is a figure `frontier-harness prove` prints (its table's title), not an assert."""
    results = check.prove()
    assert {r.obligation.name: r.status for r in results} == {name: "proved" for name in registry.NAMES}


def test_a_case_that_holds_without_any_hypothesis_is_trivial_not_proved():
    statuses = {(r.obligation.name, v.case.label): v.status for r in check.prove() for v in r.verdicts}
    for label in ("leaf load_generator", "leaf non_epoch_source", "leaf constant", "inputs: no input"):
        assert statuses[("time-dependence", label)] == "trivial"
    assert statuses[("lattice", "product join is the least upper bound")] == "trivial"
    assert statuses[("time-dependence", "leaf table")] == "proved"
    assert statuses[("useful", "leaf table not ahead")] == "proved"
    only_trivial = check.Result(
        registry.get("lattice"),
        (check.Verdict(lattice.lattice_cases(FAITHFUL, World())[0], "trivial", 0),),
        0,
    )
    assert only_trivial.status == "trivial" and not only_trivial.holds  # true, but proves nothing
    assert solver_cli.exit_code([only_trivial]) == 2


def test_an_obligation_with_no_case_is_not_run_never_proved(monkeypatch, capsys):
    from rich.console import Console

    empty = registry.Obligation("empty", "an obligation whose cases were lost", lambda rules, world: [])
    monkeypatch.setattr(check, "get", lambda name: empty)
    [result] = check.prove(["lattice"])
    assert result.status == "not run" and not result.holds
    assert solver_cli.run(_args("--obligation", "lattice"), Console(width=200)) == 2
    assert "not proved: empty: it has no case" in capsys.readouterr().out


# ---------------------------------------------------------------- planted bugs


def _max_opt(u, e):
    return ite(z3.Or(z3.Not(u.has), z3.Not(e.has)), NONE, some(z3.If(u.val >= e.val, u.val, e.val)))


def _earliest_opt(a, b):
    va, vb = z3.If(a.has, a.val, 0), z3.If(b.has, b.val, 0)
    return some(z3.If(va <= vb, va, vb))


def _earliest(a, b):
    return min(0 if a is None else a, 0 if b is None else b)


# name: (the rule in the encoding, the same rule in the model, the obligation that refutes it)
PLANTED = {
    "without_the_inputs_upper_branch": (
        {"inputs_bound": lambda rules, inputs_upper, expiration: expiration},
        ("inputs_bound", lambda inputs_upper, expiration: expiration),
        "time-dependence",
    ),
    "never_expires": (
        {"dataflow_expiration": lambda rules, bound, until: NONE},
        ("dataflow_expiration", lambda bound, until: None),
        "useful",
    ),
    "replica_expires_at_start": (
        {"replica_expiration": lambda rules, start, offset: ite(offset == 0, NONE, some(start))},
        ("replica_expiration", lambda start, offset: None if offset == 0 else start),
        "time-dependence",
    ),
    "refresh_not_rounded": (
        {"round_up_to_refresh": lambda rules, schedule, bound: bound},
        ("round_up_to_refresh", lambda schedule, bound: bound),
        "time-dependence",
    ),
    "load_generator_expires": (
        {"source_bound": lambda rules, lg, epoch, wall: ite(epoch, some(wall), NONE)},
        ("source_bound", lambda kind, epoch, wall: wall if epoch else None),
        "time-dependence",
    ),
    "none_is_earliest": (
        {"meet_bounds": lambda rules, a, b: _earliest_opt(a, b)},
        ("meet_bounds", _earliest),
        "time-dependence",
    ),
    "until_joined": (
        {"meet_until": lambda rules, until, e: _max_opt(until, e)},
        ("meet_until", lambda until, e: None if until is None or e is None else max(until, e)),
        "frontier-hold",
    ),
    "no_one_tick_step": (
        {"step_one_tick": lambda rules, t: t},
        ("step_one_tick", lambda t: t),
        "frontier-hold",
    ),
}


@contextmanager
def _patched(name, replacement):
    original = getattr(ex, name)
    setattr(ex, name, replacement)
    try:
        yield
    finally:
        setattr(ex, name, original)


def _planted_impl(bug: str) -> ModelImplementation:
    rule, replacement = PLANTED[bug][1]

    class Impl(ModelImplementation):
        def observe_prove(self, domain, histories):
            with _patched(rule, replacement):
                return [prove_suite.observe(h) for h in histories]

    return Impl()


def refresh_not_rounded():
    return _planted_impl("refresh_not_rounded")


def load_generator_expires():
    return _planted_impl("load_generator_expires")


def none_is_earliest():
    return _planted_impl("none_is_earliest")


def until_joined():
    return _planted_impl("until_joined")


def no_one_tick_step():
    return _planted_impl("no_one_tick_step")


def without_the_inputs_upper_branch():
    return _planted_impl("without_the_inputs_upper_branch")


def never_expires():
    return _planted_impl("never_expires")


def replica_expires_at_start():
    return _planted_impl("replica_expires_at_start")


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_planted_bug_is_refuted_with_a_replayable_counterexample(bug, tmp_path):
    from frontier_harness.properties.cli.main import main

    encoded, _, obligation = PLANTED[bug]
    rules = attrs.evolve(FAITHFUL, **encoded)
    result = check.prove([obligation], rules)[0]
    assert result.status == "refuted"
    refuted = [v for v in result.verdicts if v.status == "refuted"]
    impl_name = f"tests.test_solver:{bug}"
    realized = next(r for r in (realize(v, rules, _planted_impl(bug), impl_name) for v in refuted) if r)
    path = counterexample.write(realized.counterexample, tmp_path)
    assert counterexample.read(path).suite == "prove"
    assert main(["replay", str(path)]) == 1  # the file names the planted implementation
    assert main(["replay", str(path), "--impl", "model"]) == 0  # the model's own rules hold on it


# The same bugs planted in Spark's coordinator rules (frontier_harness.spark_impl.catalog.expiration): name -> (rule, replacement).
SPARK_PLANTED = {
    "without_the_inputs_upper_branch": ("ahead", lambda upper, rendered, expiration: expiration),
    "never_expires": ("expiration_for", lambda bound, until: None),
    "replica_expires_at_start": ("replica_expiration", lambda start, offset: None if offset == 0 else start),
    "refresh_not_rounded": ("refresh_bound", lambda schedule, bound: bound),
    "load_generator_expires": (
        "leaf_bound",
        lambda entry, name, wall, seen: wall if entry.kind == "table" or entry.epoch else None,
    ),
    "none_is_earliest": ("meet_bounds", _earliest),
    "until_joined": ("meet_until", PLANTED["until_joined"][1][1]),
    "no_one_tick_step": ("step_one_tick", lambda t: t),
}


def _spark_planted(bug: str):
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.spark_impl.catalog import expiration as sx

    rule, replacement = SPARK_PLANTED[bug]

    class Impl(SparkImplementation):
        def observe_prove(self, domain, histories):
            original = getattr(sx, rule)
            setattr(sx, rule, replacement)
            try:
                return sx.observe_prove(domain, histories)
            finally:
                setattr(sx, rule, original)

    return Impl()


def spark_refresh_not_rounded():
    return _spark_planted("refresh_not_rounded")


@pytest.mark.spark
def test_refutations_replay_on_spark(spark_session, tmp_path):
    """Each planted bug's counterexample holds on Spark, and shows the same difference on Spark's planted."""
    from frontier_harness.properties.adapters.spark import SparkImplementation
    from frontier_harness.properties.cli.main import main

    realized = {}
    for bug, (encoded, _, obligation) in PLANTED.items():
        rules = attrs.evolve(FAITHFUL, **encoded)
        refuted = [v for v in check.prove([obligation], rules)[0].verdicts if v.status == "refuted"]
        realized[bug] = next(r for r in (realize(v, rules, _planted_impl(bug), bug) for v in refuted) if r)
    histories = [r.counterexample.history for r in realized.values()]
    assert all(o.ok for o in prove_suite.check(SparkImplementation(), histories))
    for bug, r in realized.items():
        [outcome] = prove_suite.check(_spark_planted(bug), [r.counterexample.history])
        assert not outcome.ok and outcome.step == r.outcome.step, (bug, outcome.message, r.outcome.message)
    path = counterexample.write(
        attrs.evolve(
            realized["refresh_not_rounded"].counterexample, impl="tests.test_solver:spark_refresh_not_rounded"
        ),
        tmp_path,
    )
    assert main(["replay", str(path)]) == 1
    assert main(["replay", str(path), "--impl", "spark"]) == 0
    beyond = tmp_path / "beyond"
    assert (
        solver_cli.run(
            _args("--obligation", "time-dependence", "--skew", "1", "--out", str(beyond)), _console()
        )
        == 1
    )
    [written] = list(beyond.glob("prove-*.itf.json"))
    assert main(["replay", str(written), "--impl", "spark"]) == 1  # beyond the bound on Spark too


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_bug_breaks_the_encodings_equality_with_the_model(bug):
    """The Hypothesis equality is what ties the proof to the code: a changed rule no longer matches."""
    rule, replacement = PLANTED[bug][1]
    samples = [(None, 5), (3, 7), (12, None), (4, 4), (0, 9), (9, 4)]
    assert not any(_rule_differs(rule, *s) for s in samples)
    with _patched(rule, replacement):
        assert any(_rule_differs(rule, *s) for s in samples)


def _rule_differs(rule, a, b):
    if rule in ("inputs_bound", "replica_expiration"):
        if a is None or b is None:
            return False
        got = z(rule, z3.IntVal(a), z3.IntVal(b))
        return getattr(ex, rule)(a, b) != (got if got is None or isinstance(got, int) else got.as_long())
    if rule == "round_up_to_refresh":
        schedule = (RefreshEvery(10, 0),)
        return b is not None and ex.round_up_to_refresh(schedule, b) != z(
            rule, (enc.clause(schedule[0]),), lift(b)
        )
    if rule == "source_bound":
        return b is not None and ex.source_bound("load_generator", True, b) != z(
            rule, z3.BoolVal(True), z3.BoolVal(True), z3.IntVal(b)
        )
    if rule == "step_one_tick":
        return b is not None and ex.step_one_tick(b) != z(rule, z3.IntVal(b)).as_long()
    return getattr(ex, rule)(a, b) != z(rule, lift(a), lift(b))


def test_a_lead_gained_after_the_render_refutes_time_dependence_and_names_the_assumption():
    """`--skew 1`: an input one tick further ahead than when the dataflow was rendered is beyond the bound."""
    assert check.prove(["time-dependence"], skew=0)[0].status == "proved"
    result = check.prove(["time-dependence"], skew=1)[0]
    refuted = {v.case.label: v for v in result.verdicts if v.status == "refuted"}
    assert set(refuted) == {"leaf table", "leaf source"}
    assert "--skew" in refuted["leaf table"].case.assumption
    assert refuted["leaf table"].values["upper"] > refuted["leaf table"].values["bound"]


@pytest.mark.parametrize(
    "expiration",
    [
        lambda start, offset: start,
        lambda start, offset: start + offset - 1,
        lambda start, offset: 100 - start,
        lambda start, offset: start + offset + 1,
    ],
)
def test_replica_expiration_is_pinned_to_start_plus_offset(expiration):
    """Earlier than `start + offset` breaks soundness (1, 4); later breaks usefulness (5)."""
    rules = attrs.evolve(
        FAITHFUL, replica_expiration=lambda r, s, o: ite(o == 0, NONE, some(expiration(s, o)))
    )
    statuses = {
        r.obligation.name: r.status for r in check.prove(["time-dependence", "restart", "useful"], rules)
    }
    assert "refuted" in statuses.values(), statuses


def test_restart_is_derived_from_the_rules_not_assumed():
    """A replica expiration that goes down with a later start: the restart obligation refutes it by itself."""
    rules = attrs.evolve(FAITHFUL, replica_expiration=lambda r, s, o: ite(o == 0, NONE, some(1000 - s)))
    result = check.prove(["restart"], rules)[0]
    assert result.status == "refuted"
    assert {v.case.label for v in result.verdicts if v.status == "refuted"} >= {"leaf table monotone"}


@pytest.mark.parametrize(
    "planted",
    [
        lambda rules, schedule, t: enc.next_refresh(FAITHFUL, schedule, t - 1),
        lambda rules, schedule, t: enc.next_refresh(FAITHFUL, schedule[:1], t),
    ],
)
def test_refresh_is_checked_against_the_documented_schedule(planted):
    rules = attrs.evolve(FAITHFUL, next_refresh=planted)
    assert check.prove(["refresh"], rules)[0].status == "refuted"


# ---------------------------------------------------------------- the verb


def _args(*argv):
    parser = argparse.ArgumentParser()
    solver_cli.add_parser(parser.add_subparsers(dest="verb"))
    return parser.parse_args(["prove", *argv])


def _console():
    from rich.console import Console

    return Console(file=open("/dev/null", "w"), width=200)


def test_prove_verb_exit_codes_and_json(tmp_path):
    out = tmp_path / "proved.json"
    assert solver_cli.run(_args("--json", str(out)), _console()) == 0
    assert {o["status"] for o in json.loads(out.read_text())["obligations"]} == {"proved"}
    assert (
        solver_cli.run(
            _args("--obligation", "time-dependence", "--skew", "1", "--out", str(tmp_path)), _console()
        )
        == 1
    )


def test_skew_beyond_the_bound_is_refuted_with_a_file_that_fails_on_the_model(tmp_path):
    """A lead gained after the render is beyond what the branch handles: the model itself shows it."""
    from frontier_harness.properties.cli.main import main

    args = _args("--obligation", "time-dependence", "--skew", "1", "--out", str(tmp_path))
    assert solver_cli.run(args, _console()) == 1
    [written] = list(tmp_path.glob("prove-*.itf.json"))
    assert any(a.name == "skew" for a in counterexample.read(written).history.actions)
    assert main(["replay", str(written), "--impl", "model"]) == 1


def test_a_give_up_is_reported_as_such_never_as_proved(tmp_path):
    out = tmp_path / "unknown.json"
    assert solver_cli.run(_args("--rlimit", "1", "--json", str(out)), _console()) == 3
    statuses = {o["status"] for o in json.loads(out.read_text())["obligations"]}
    assert statuses == {"unknown"}


def test_a_planted_bug_through_the_verb_writes_a_counterexample(tmp_path):
    rules = attrs.evolve(FAITHFUL, **PLANTED["refresh_not_rounded"][0])
    code = solver_cli.run(
        _args("--obligation", "time-dependence", "--out", str(tmp_path)),
        _console(),
        rules,
        _planted_impl("refresh_not_rounded"),
        "tests.test_solver:refresh_not_rounded",
    )
    assert code == 1
    [written] = list(tmp_path.glob("prove-*.itf.json"))
    assert counterexample.read(written).impl == "tests.test_solver:refresh_not_rounded"


def test_the_prove_suite_holds_on_the_model():
    from frontier_harness.properties.engine.profiles import PROFILES
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

    profile = attrs.evolve(PROFILES["ci"], max_examples=20, screening_histories=100)
    result = run_suite(SuiteRequest(prove_suite.SUITE, ModelImplementation(), "model", profile, 0))
    assert result.passed and result.missing_events == ()


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_the_prove_suite_catches_each_planted_bug_through_its_own_search_and_shrinking(bug, tmp_path):
    """No hand-written scenario: the suite draws, finds and shrinks the failure (a count of implementation
    calls bounds the shrinking, so the size is the same on any machine), and the file replays."""
    from frontier_harness.properties.cli.main import main
    from frontier_harness.properties.engine.runner import SuiteRequest, run_suite
    from tests.helpers import QUICK

    impl_name = f"tests.test_solver:{bug}"
    result = run_suite(
        SuiteRequest(prove_suite.SUITE, _planted_impl(bug), impl_name, QUICK, 0, fail_fast=True)
    )
    failure = next(r.failure for r in result.results if r.failure is not None)
    assert len(failure.history.actions) <= 6, failure.history
    path = counterexample.write(failure, tmp_path)  # (an argument that is None is left out: ITF has no null)
    assert main(["replay", str(path)]) == 1
    assert main(["replay", str(path), "--impl", "model"]) == 0
