"""The cdc suite: a Structured Streaming query over a PostgreSQL replication slot, judged by the model."""
