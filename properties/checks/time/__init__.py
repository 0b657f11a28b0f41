"""Partial orders, antichains and frontiers, update collections and shards: the `laws`,
`collections` and `mutable_antichain` suites."""
