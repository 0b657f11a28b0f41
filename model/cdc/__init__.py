"""Change data capture: a PostgreSQL table's transactions, reclocked into a streaming query's batches."""
