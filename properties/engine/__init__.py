"""The harness engine: histories, sources of choices, suites, the batched runner, shrinking,
counterexample files and reports. It knows no engine under test and no suite."""
