"""The Hypothesis lane's draws and example database: the run's seed, or the property's own directory.

Hypothesis keys its database by the test function and, derandomized, seeds from its
source text; the lane's function (`one_batch`) is one for every property. So a lane
without a database seeds with the run's seed, as the screening lane does, and a
profile that keeps one (`thorough`) keeps each property's examples under a directory
of its own (`search.example_database`). Before, `hypothesis.seed` dropped the database
(nothing was ever kept) and a derandomized profile given one raised `InvalidArgument`.
"""

from __future__ import annotations

import attrs

from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.run import Run
from frontier_harness.properties.engine.search import hypothesis_lane
from tests.test_small_counterexamples import COLLECTIONS, PRODUCT, TupleOrder

# Shrinking by a count of implementation calls (as `ci` does): the same history on any machine, loaded or not.
QUICK = attrs.evolve(PROFILES["dev"], max_examples=100, shrink_by_calls=True, shrink_seconds=900.0)


class OneUpdateTooMany(TupleOrder):
    """Every history's final collection with one update the model never has: fails on the first history drawn,
    whatever Hypothesis draws (a database run draws with its own randomness, not the run's seed)."""

    def observe_collections(self, domain, histories):
        observed = super().observe_collections(domain, histories)
        for observation, history in zip(observed, histories):
            final = (len(history.actions), "final")
            observation[final] = observation[final] | {("never", (0, 0), 1)}
        return observed


def run_with(profile, impl=None) -> Run:
    impl = impl or TupleOrder()
    return Run(COLLECTIONS, COLLECTIONS.properties[0], impl, impl.name, PRODUCT, profile, 0)


def test_a_failure_is_kept_under_its_own_propertys_directory(tmp_path):
    run = run_with(attrs.evolve(QUICK, database=str(tmp_path)), OneUpdateTooMany())
    assert hypothesis_lane(run).failure is not None
    assert [p.name for p in tmp_path.iterdir()] == [run.label]
    assert any(p.is_file() for p in (tmp_path / run.label).rglob("*"))


def test_a_derandomized_lane_runs_fixed_and_keeps_nothing(tmp_path):
    """Hypothesis's own `derandomize` refuses a database (`InvalidArgument`); the lane's seed needs none."""
    run = run_with(attrs.evolve(QUICK, database=str(tmp_path), derandomize=True))
    assert hypothesis_lane(run).failure is not None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_the_same_seed_draws_the_same_histories():
    first, again = (hypothesis_lane(run_with(QUICK)) for _ in range(2))
    assert first.failure is not None and first.examples == again.examples
    assert first.failure.history == again.failure.history
