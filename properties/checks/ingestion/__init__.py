"""Bounded input reliance: `resumption` (the pipeline against the model) and `durable` (over durable shards)."""
