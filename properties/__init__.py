"""The harness: strategies, suites, the batched runner, counterexamples, the solver and the CLI."""
