"""Ingestion on Spark: the bounded-input-reliance pipeline and its durable shards."""
