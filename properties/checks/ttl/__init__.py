"""The TTL store: the `ttl`, `ttl_compaction` and `ttl_codec` suites."""
