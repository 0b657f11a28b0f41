"""The streaming suite's oracle for a user's job: the same job run as a batch, without crashes.

Under `--job` (`frontier_harness.properties.checks.streaming.job`) a trial runs the user's `transform` and `write` and
reports, after every step, what the job's `read(spark)` returned (`job_rows`: rows as
`(column, value)` pairs, with their counts). `job_exactly_once` holds when, after every
step that left the query up, those rows equal, as a multiset, the job's `transform`
applied as a batch job to the records of the committed batches (which records those are
comes from the model's reclocked collection through the remap the offset log is:
`committed.committed_batches`); at the end, to every record produced. When `read`
returns a `batch_id` column that `transform` does not make, the batch id is compared too.

The batch job runs once per distinct batch of records across a whole check
(`batch_outputs`, through the implementation's `job_outputs`), never once per step. A
failure names the rows missing, doubled or unexpected, each with the batch it belongs to:
its `batch_id`, the batch whose records hold its `partition` and `offset`, or the batch
whose transformed records it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from frontier_harness.model.vocabulary.streaming import StreamingLabel
from frontier_harness.properties.checks.streaming.committed import committed_batches, up_steps
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Observation
from frontier_harness.properties.engine.suite import Outcome

Row = tuple  # ((column, value), ...) sorted by column
Outputs = dict[tuple, Counter]  # a batch's records -> the batch job's rows
SHOWN = 6  # rows named per kind in a message


def batch_outputs(impl: Any, histories: Sequence[History], observed: Sequence[Observation]) -> Outputs:
    """The batch job's rows for every committed batch any judged step needs, in one call."""
    needed: set[tuple] = set()
    for history, obs in zip(histories, observed):
        for step in up_steps(obs):
            batches = committed_batches(history, obs, step)
            if not isinstance(batches, Outcome):
                needed.update(tuple(records) for records in batches.values())
    ordered = sorted(needed)
    return dict(zip(ordered, impl.job_outputs(ordered))) if ordered else {}


def job_exactly_once(history: History, obs: Observation, outputs: Outputs) -> Outcome:
    """`read(spark)` equals `transform` over the committed batches after every step that left the query up."""
    for step in up_steps(obs):
        batches = committed_batches(history, obs, step)
        if isinstance(batches, Outcome):
            return batches
        actual = Counter(dict(obs.get((step, StreamingLabel.JOB_ROWS), frozenset())))
        by_batch = _expected(batches, outputs, _keeps_batch_id(actual, outputs))
        expected = sum(by_batch.values(), Counter())
        if actual != expected:
            logged = committed_batches(history, obs, step, uncommitted=True)
            return _mismatch(
                step, expected, actual, by_batch, logged if isinstance(logged, dict) else batches
            )
    return Outcome(ok=True)


def _keeps_batch_id(actual: Counter, outputs: Outputs) -> bool:
    """`read` returns a `batch_id` column that `transform` does not make: the writer recorded it."""
    made = any("batch_id" in dict(row) for rows in outputs.values() for row in rows)
    return not made and any("batch_id" in dict(row) for row in actual)


def _expected(batches: dict[int, list], outputs: Outputs, batch_id: bool) -> dict[int, Counter]:
    found = {}
    for batch, records in batches.items():
        rows = Counter(outputs.get(tuple(records), {}))
        if batch_id:
            rows = Counter({tuple(sorted((*row, ("batch_id", batch)))): n for row, n in rows.items()})
        found[batch] = rows
    return found


def _mismatch(
    step: int, expected: Counter, actual: Counter, by_batch: dict[int, Counter], logged: dict[int, list]
) -> Outcome:
    """Names the rows missing, doubled and unexpected, each with its batch (`logged`: every batch's records)."""
    at = {(r[1], r[2]): b for b, records in logged.items() for r in records}
    missing, extra = expected - actual, actual - expected
    doubled = Counter({row: n for row, n in extra.items() if row in expected})
    unexpected = extra - doubled

    def batch_of(row: Row) -> str:
        values = dict(row)
        if "batch_id" in values:
            return f"batch {values['batch_id']}"
        owner = at.get((values.get("partition"), values.get("offset")))
        if owner is None:
            owner = next((b for b, rows in sorted(by_batch.items()) if row in rows), None)
        return f"batch {owner}" if owner is not None else "no committed batch"

    def named(rows: Counter, counts: bool = False) -> str:
        shown = [
            f"{_show(row)} ({batch_of(row)}"
            + (f", held {actual[row]}x, expected {expected[row]}x)" if counts else ")")
            for row in sorted(rows, key=repr)[:SHOWN]
        ]
        more = f" and {len(rows) - SHOWN} more" if len(rows) > SHOWN else ""
        return "[" + "; ".join(shown) + more + "]"

    parts = [
        f"missing {named(missing)}" if missing else "",
        f"doubled {named(doubled, counts=True)}" if doubled else "",
        f"unexpected {named(unexpected)}" if unexpected else "",
        _columns_differ(expected, actual),
    ]
    message = (
        f"the job's rows are not its transform over the committed batches {sorted(by_batch)}: "
        + ", ".join(p for p in parts if p)
    )
    return Outcome(
        ok=False,
        message=message,
        expected={(step, StreamingLabel.JOB_ROWS): frozenset(shown_rows(expected))},
        actual={(step, StreamingLabel.JOB_ROWS): frozenset(shown_rows(actual))},
        step=step,
    )


def _columns_differ(expected: Counter, actual: Counter) -> str:
    want = {name for row in expected for name, _ in row}
    got = {name for row in actual for name, _ in row}
    if want and got and want != got:
        return f"read(spark) returns columns {sorted(got)}, transform makes {sorted(want)}"
    return ""


def shown_rows(rows: Counter) -> list[str]:
    """Rows as a counterexample shows them: `{column=value, ...}`, with `xN` when held N times.

    >>> shown_rows(Counter({(("data", "a"), ("offset", 0)): 2}))
    ["{data='a', offset=0} x2"]
    """
    return [_show(row) + (f" x{n}" if n != 1 else "") for row, n in rows.items()]


def _show(row: Row) -> str:
    return "{" + ", ".join(f"{name}={value!r}" for name, value in row) + "}"
