"""The z3-backed checker: proofs that dataflow expiration never drops visible data.

- `encoding`: the model's expiration rules (model/expiration.py, model/catalog.py)
  re-stated over z3 terms, `Optional[int]` as a pair `(has, val)`; a Hypothesis
  test (tests/test_solver.py) holds every rule equal to the model on concrete inputs.
- `obligations`: the issue's obligations (time dependence sound per kind, nothing
  visible dropped, the frontier hold sufficient, restart) and the lattice laws,
  with the world's assumptions written as code.
- `realize`: a refutation as a concrete scenario (`frontier_harness.properties.checks.catalog.strategies.scenarios`),
  written as an ITF counterexample of the `prove` suite that `frontier-harness replay` re-runs.
- `cli`: the `prove` verb.
"""
