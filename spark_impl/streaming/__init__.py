"""Spark Structured Streaming as the engine under test: our source, sinks, and crash trials."""
