"""Time: domains and their values, antichains and frontiers, update collections and shards."""
