"""Event time in Spark's micro-batches: watermarks as frontiers, lateness, state eviction as expiration, per
stateful operator (`stateful`: one aggregation or deduplication; `dag`: each operator's own watermarks; `join`,
`session`, `chain`, `output_modes`; `timers`: when a processor's event-time timer fires)."""
