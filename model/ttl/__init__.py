"""The TTL store: an LSM key-value store whose rows carry a clock time and an expiry.

A user-supplied clock (milliseconds, wrapped so readings never go back: `clock`)
stamps every write and is read once by every operation. A row (`row`) carries
`create_ts` and `expire_ts`; it is expired at `now` iff `expire_ts <= now`
(`row.is_expired` says why not `<`), and that one predicate serves reads and
compaction alike. Writes go WAL -> memtable -> L0 SSTs -> sorted runs (`store`);
reads hide expired rows, compaction (at its own clock reading, so a quiet store
still reclaims them) turns them into tombstones and drops tombstones only in
the last run, so neither TTL nor compaction ever changes what a read returns
except that a row disappears exactly when it is due. The clock's high-water
mark is durable, so a crash does not bring back a row any read already saw
expired (`store` states the promise). `codec` encodes SSTs (format v0 and v1, one
CRC32 per row) byte for byte.

>>> from frontier_harness.model.ttl.clock import ManualClock
>>> from frontier_harness.model.ttl.store import StoreOptions, TtlStore
>>> clock = ManualClock(100)
>>> store = TtlStore.open(clock, StoreOptions(default_ttl=10))
>>> store.put(b"k", b"v")
>>> clock.set(110)
>>> store.get(b"k") is None
True
"""
