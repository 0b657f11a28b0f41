"""Time on Spark: time columns, frontiers, mutable antichains and update collections."""
