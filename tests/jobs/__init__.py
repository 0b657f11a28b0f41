"""Streaming jobs written as a user would, for `--job` (see `frontier_harness.properties.checks.streaming.job`): good ones and bad ones."""
