"""Event time on Spark's engine: a stateful job's plan (watermarks, its stateful operator) and its state store."""
