"""The TTL store on Spark, mirroring `frontier_harness.model.ttl` module by module but sharing none of its logic.

- `row`: the row schema and the expiry rules as Column expressions (`expire_ts <= now`);
- `clock`: the store's monotonic clock, whose high-water mark is a durable file;
- `files`: the durable files (atomic JSON, fsynced WAL lines);
- `manifest`: SST metadata, the manifest, and its span rules (written apart from the model's);
- `segments`: Parquet files holding SSTs, each row tagged with its store and SST;
- `compaction`: compaction as a DataFrame job, many stores' compactions in one job;
- `requests`: the I/O a store asks for (flush an SST, run a compaction) and who performs it;
- `store`: `SparkTtlStore`, the driver side (clock, WAL, memtable, manifest);
- `read`: reads (and the audits of what SSTs keep) of many snapshots in one job;
- `store_observer`, `compaction_observer`: the batched observers the ttl and
  ttl_compaction suites call; `codec`: the SST byte format (ttl_codec suite).
"""
