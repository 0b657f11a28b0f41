"""The I/O a store asks for, and who performs it: one store at a time, or many stores at once.

A store's flush, compaction and periodic compaction are generators: they read the
clock, check what they may, then yield one request (an SST to write, a compaction
to run) and finish with its result (the new SST's metadata; None for a
compaction that left nothing). `drive` performs one store's requests as they
come; `drive_all` runs many stores' operations in lockstep, so every round's
flushes share one segment file and its compactions one Spark job.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, TypeVar

from frontier_harness.spark_impl.ttl.compaction import Compaction, run_compactions
from frontier_harness.spark_impl.ttl.manifest import SstInfo
from frontier_harness.spark_impl.ttl.segments import Segments, SstRows

T = TypeVar("T")
Request = SstRows | Compaction
Operation = Generator[Request, SstInfo | None, T]


def perform(segments: Segments, requests: Sequence[Request]) -> list[SstInfo | None]:
    """Every request's result, in order: the SSTs to write in one segment, the compactions in one job."""
    writes = [r for r in requests if isinstance(r, SstRows)]
    compactions = [r for r in requests if isinstance(r, Compaction)]
    written = iter(segments.write(writes) if writes else [])
    compacted = iter(run_compactions(segments, compactions) if compactions else [])
    return [next(written) if isinstance(r, SstRows) else next(compacted) for r in requests]


def drive(segments: Segments, operation: Operation[T]) -> T:
    """Runs one operation, performing each request it yields on its own."""
    try:
        request = next(operation)
        while True:
            request = operation.send(perform(segments, [request])[0])
    except StopIteration as done:
        return done.value


def drive_all(segments: Segments, operations: Sequence[Operation[Any]]) -> None:
    """Runs every operation to its end; each round performs together the requests the pending
    ones yielded, so the number of rounds is the most requests any one operation makes."""
    pending = {k: r for k, op in enumerate(operations) if (r := _step(op, None, first=True)) is not None}
    while pending:
        ids = sorted(pending)
        for k, result in zip(ids, perform(segments, [pending.pop(k) for k in ids])):
            if (request := _step(operations[k], result, first=False)) is not None:
                pending[k] = request


def _step(operation: Operation[Any], result: SstInfo | None, first: bool) -> Request | None:
    """The operation's next request, None once it has finished."""
    try:
        return next(operation) if first else operation.send(result)
    except StopIteration:
        return None
