"""A Structured Streaming checkpoint as a history, and the laws it obeys.

A checkpoint's `offsets/N` binds batch `N` (an IntoTime) to the sources' end offsets
(a FromTime frontier per stream), so the offset log is a remap; `commits/N` marks
batch `N` durable; a file sink's `_spark_metadata/N` lists what batch `N` wrote. The
reader (`reader`) turns the files into a history of plain actions, in the order Spark
writes them, one batch after another:

- `file_sink {}`: first, when the history includes a file sink's log;
- `offsets {batch, source, domain, offsets}`: the end offsets of one stream (`offsets`
  encoded in `domain`; see `offsets`), or `offsets {batch}` for a batch with none;
- `sink {batch, files}`: one sink log file for the batch and how many data files it lists;
- `commit {batch}`: the batch's commit log entry.

`laws` checks the model's laws on such a history; `validate-checkpoint` (the CLI) and
the `checkpoint` suite use both, and the `streaming` suite builds the same history from
what its trials observe.
"""
