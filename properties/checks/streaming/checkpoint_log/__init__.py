"""A Structured Streaming checkpoint as a history, and the laws it obeys.

A checkpoint's `offsets/N` binds batch `N` (an IntoTime) to the sources' end offsets
(a FromTime frontier per stream), so the offset log is a remap; `commits/N` marks
batch `N` durable; a file sink's `_spark_metadata/N` lists what batch `N` wrote. The
reader (`reader`) turns the files into a history of plain actions, in the order Spark
writes them, one batch after another:

- `retain {batches}`: first: Spark's `minBatchesToRetain`, which bounds what Spark purges
  (100 when absent);
- `file_sink {}` (`{retention_ms}` with a `retention` option): when the history includes a
  file sink's log;
- `expect {law, damage}`: only in the `checkpoint` suite's damaged logs: the law the
  damage breaks (the laws ignore it; the suite checks they report it);
- `offsets {batch, source, domain, offsets}`: the end offsets of one stream (`offsets`
  encoded in `domain`; see `offsets`), `offsets {batch, source, unchecked}` for a source
  whose offsets are in no shape the reader knows, or `offsets {batch}` for a batch with none;
- `sink {batch, files, compact}`: one sink log file (`N`, or `N.compact`) and the data files
  it lists, by path relative to the sink (`mtimes` with a retention, `deleted` for `delete`
  entries); `files` may instead be a count, for a sink observed by its rows;
- `commit {batch}`: the batch's commit log entry.

`laws` checks the model's laws on such a history; `validate-checkpoint` (the CLI) and
the `checkpoint` suite use both, and the `streaming` suite builds the same history from
what its trials observe.
"""
