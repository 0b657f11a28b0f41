"""The *summary* suite: an implementation's practical-reclocking summaries, and its restarts, against the model's.

The restart suite's histories (`draw_restart_history`): mints, source records and
a crash tick `it`. Observed (`observe`, against `observe_summary`), for each
summarizer the model runs on the records (`independent`; `ordered` and
`unordered` for data and transaction metadata): the remap's steps, and at every
step the output `(t, data, into_time, diff)` and the temp records
`(t, kind, txn, payload, size, time, count)`; then the same for the restart from
`R(it)` and the summary at `it` (`restarted ...`), which reads only the records
`R(it)` does not cover. A history reduced to no crash shows the run alone.
"""

from __future__ import annotations

from collections import Counter

from frontier_harness.model.summary import DataRecord, Independent, restart, run, summary_at
from frontier_harness.properties.checks.reclocking.restart import (
    drawer,
    events,
    kind,
    read,
    summarizers,
    unread,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import Observation, Property, Suite, differential


def observe(history: History) -> Observation:
    """The model's summaries at every step, of the run and of its restart from `it`.

    >>> from frontier_harness.properties.engine.history import Action
    >>> h = History("total", (Action("mint", {"upper": (2,), "tick": 3}), Action("update", {"data": "a", "time": 1, "diff": 1})))
    >>> sorted(observe(h)[(2, "independent output")])
    [(3, 'a', 3, 1)]
    """
    remap, records, crash = read(history)
    end = len(history.actions)
    observed = {(end, "steps"): frozenset((t,) for t, _ in remap.steps())}
    for summarizer in summarizers(records):
        full = run(remap, summarizer, records)
        observed |= _summaries(end, summarizer_name(summarizer), full)
        if crash is not None:
            resumed = restart(
                remap, summarizer, crash, summary_at(full, crash), unread(remap, summarizer, crash, records)
            )
            observed |= _summaries(end, f"restarted {summarizer_name(summarizer)}", resumed)
    return observed


def summarizer_name(summarizer) -> str:
    """The observation's name for a summarizer: independent, ordered or unordered.

    >>> summarizer_name(Independent())
    'independent'
    """
    if summarizer == Independent():
        return "independent"
    return "ordered" if summarizer.ordered else "unordered"


def _summaries(end: int, name: str, summaries: tuple) -> Observation:
    output = frozenset((t, u.data, u.time, u.diff) for t, s in summaries for u in s.output)
    temp = frozenset((t, *_temp_row(r), n) for t, s in summaries for r, n in Counter(s.temp).items())
    return {(end, f"{name} output"): output, (end, f"{name} temp"): temp}


def _temp_row(record) -> tuple:
    if isinstance(record, DataRecord):
        return ("data", record.txn, record.payload, None, record.time)
    return ("txn", record.txn, None, record.size, record.time)


def summaries_match_model(transactional: bool) -> Property:
    """The implementation's summaries and restarted summaries (`observe_summary`) against the model's."""
    return Property(
        name=f"{kind(transactional)}_summaries_match_model",
        doc="Every step's output and temp of each summarizer, and of its restart from R(it), equal the model's.",
        draw=drawer(transactional),
        check=differential(observe, "observe_summary"),
        events=events,
    )


SUITE = Suite(
    name="summary",
    doc="Practical reclocking on an implementation: summaries at every IntoTime and restarts from R(it), against the model.",
    properties=(summaries_match_model(transactional=False), summaries_match_model(transactional=True)),
    default_impl="spark",
    spark_cost=2.0,  # ~40 stages a job: a batch costs seconds
    required_events=(
        "crash at a binding time",
        "source closed",
        "records not yet covered",
        "earlier incomplete transaction holds back a later one",
        "records held in temp at the crash",
    ),
)
