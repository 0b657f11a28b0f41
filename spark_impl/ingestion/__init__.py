"""Ingestion on Spark: the pipeline, durable shards, and Structured Streaming trials."""
