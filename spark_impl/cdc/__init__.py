"""The CDC source: Postgres logical replication read by Spark."""
