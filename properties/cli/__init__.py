"""The `frontier-harness` command: one module per verb, and the pytest plugin."""
