"""A change to a running stateful job on Spark: what the old and the new job key a checkpoint on, read from
their plans (`planned`)."""
