"""The z3-backed checker: proofs that dataflow expiration never drops visible data.

- `encoding`: the model's expiration rules (model/catalog/expiration.py, model/catalog/catalog.py)
  re-stated over z3 terms, `Optional[int]` as a pair `(has, val)`; a Hypothesis
  test (tests/test_solver.py) holds every rule equal to the model on concrete inputs.
- `world`: the world's assumptions (how uppers move), written as code.
- `cases`: a `Case` (hypotheses and a goal) and the pieces every obligation builds from.
- `obligations/`: one module per obligation (time dependence sound per kind, nothing
  visible dropped, the frontier hold sufficient, restart, usefulness, refresh).
- `lattice`: the lattice laws of Product and Partitioned.
- `registry`: the obligations by name; `check`: solving a case, proving an obligation.
- `realize`: a refutation as a concrete scenario (`frontier_harness.properties.checks.catalog.strategies.scenarios`),
  written as an ITF counterexample of the `prove` suite that `frontier-harness replay` re-runs.

The `prove` verb is `frontier_harness.properties.cli.prove`.
"""
