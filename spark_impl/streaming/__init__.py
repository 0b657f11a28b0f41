"""Spark Structured Streaming as the engine under test: our sources, sinks, queries and crash trials."""
