"""The *summary* suite: an implementation's practical-reclocking summaries, and its restarts, against the model's.

The restart suite's histories (`draw_restart_history`): mints, source records and
a crash tick `it`. Observed (`observe`, against `observe_summary`), for each
summarizer the model runs on the records (`independent`; `ordered` and
`unordered` for data and transaction metadata): the remap's steps, and at every
step the output `(t, data, into_time, diff)` and the temp records
`(t, kind, txn, payload, size, time, count)`; then the same for the restart from
`R(it)` and the summary at `it` (`restarted ...`), which reads only the records
`R(it)` does not cover. A history reduced to no crash shows the run alone.

`unordered_summary_is_a_fold` judges the unordered transactional summaries (and their
restart) against `frontier_harness.properties.checks.reclocking.oracles.summary`, an independent fold of the input written
from the seed: the implementation's steps and unordered labels equal the fold's. With
the model as the implementation this is the check that can fail on the model itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from frontier_harness.model.reclocking.summary import DataRecord, Independent, restart, run, summary_at
from frontier_harness.model.time.domains import Domain
from frontier_harness.model.vocabulary.reclocking import (
    RestartAction,
    Summarizer,
    SummaryLabel,
    SummaryPart,
    SummaryRun,
    summary_label,
)
from frontier_harness.properties.checks.reclocking.oracles import summary as fold
from frontier_harness.properties.checks.reclocking.restart import (
    BOUNDARIES,
    drawer,
    events,
    kind,
    read,
    summarizers,
    unread,
)
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.implementation import Implementation
from frontier_harness.properties.engine.suite import (
    Observation,
    Property,
    Reference,
    Suite,
    differential,
    observations,
)


def observe(history: History) -> Observation:
    """The model's summaries at every step, of the run and of its restart from `it`.

    >>> from frontier_harness.properties.engine.history import Action
    >>> h = History("total", (Action("mint", {"upper": (2,), "tick": 3}), Action("update", {"data": "a", "time": 1, "diff": 1})))
    >>> sorted(observe(h)[(2, "independent output")])
    [(3, 'a', 3, 1)]
    """
    remap, records, crash = read(history)
    end = len(history.actions)
    observed: Observation = {(end, SummaryLabel.STEPS): frozenset((t,) for t, _ in remap.steps())}
    for summarizer in summarizers(records):
        full = run(remap, summarizer, records)
        observed |= _summaries(end, SummaryRun.RUN, summarizer_name(summarizer), full)
        if crash is not None:
            resumed = restart(
                remap, summarizer, crash, summary_at(full, crash), unread(remap, summarizer, crash, records)
            )
            observed |= _summaries(end, SummaryRun.RESTARTED, summarizer_name(summarizer), resumed)
    return observed


def summarizer_name(summarizer) -> Summarizer:
    """The observation's name for a summarizer: independent, ordered or unordered.

    >>> summarizer_name(Independent())
    'independent'
    """
    if summarizer == Independent():
        return Summarizer.INDEPENDENT
    return Summarizer.ORDERED if summarizer.ordered else Summarizer.UNORDERED


def _summaries(end: int, run_: SummaryRun, summarizer: Summarizer, summaries: tuple) -> Observation:
    output = frozenset((t, u.data, u.time, u.diff) for t, s in summaries for u in s.output)
    temp = frozenset((t, *_temp_row(r), n) for t, s in summaries for r, n in Counter(s.temp).items())
    return {
        (end, summary_label(run_, summarizer, SummaryPart.OUTPUT)): output,
        (end, summary_label(run_, summarizer, SummaryPart.TEMP)): temp,
    }


def _temp_row(record) -> tuple:
    if isinstance(record, DataRecord):
        return (RestartAction.DATA, record.txn, record.payload, None, record.time)
    return (RestartAction.TXN, record.txn, None, record.size, record.time)


def summaries_match_model(transactional: bool) -> Property:
    """The implementation's summaries and restarted summaries (`observe_summary`) against the model's."""
    return Property(
        name=f"{kind(transactional)}_summaries_match_model",
        doc="Every step's output and temp of each summarizer, and of its restart from R(it), equal the model's.",
        draw=drawer(transactional),
        check=differential(observe, "observe_summary"),
        events=events,
    )


class _Unordered:
    """An implementation seen through the fold's labels only (the ordered and independent ones it does not state);
    everything else is the implementation's own."""

    def __init__(self, impl: Implementation) -> None:
        self.impl = impl
        self.name, self.speed = impl.name, impl.speed

    def prepare(self) -> None:
        self.impl.prepare()

    def recover(self) -> None:
        self.impl.recover()

    def infrastructure_failure(self, exc: Exception) -> str | None:
        return self.impl.infrastructure_failure(exc)

    def observe_summary(self, domain: Domain, histories: Sequence[History]) -> list[Observation]:
        """The implementation's observations (shared with the other properties: `shared_observations`), cut to the fold's labels."""
        observed = observations(self.impl, "observe_summary", histories)
        return [{k: v for k, v in o.items() if k[1] in fold.LABELS and v} for o in observed]


def unordered_summary_is_a_fold() -> Property:
    """The implementation's unordered summaries and their restart against the fold of the input (`oracles.summary`)."""
    check = differential(fold.observe, "observe_summary")
    return Property(
        name="unordered_summary_is_a_fold",
        doc="At every step, the unordered output and temp (and after a restart from R(it)) equal a fold of the input.",
        draw=drawer(True),
        check=lambda impl, histories: check(_Unordered(impl), histories),
        events=events,
        reference=Reference.ORACLE,
    )


SUITE = Suite(
    name="summary",
    doc="Practical reclocking on an implementation: summaries at every IntoTime and restarts from R(it), against the model.",
    properties=(
        summaries_match_model(transactional=False),
        summaries_match_model(transactional=True),
        unordered_summary_is_a_fold(),
    ),
    default_impl="spark",
    reference=Reference.MODEL,
    batched_cost=2.0,  # ~40 stages a job: a batch costs seconds
    required_events=(
        "crash at a binding time",
        "source closed",
        "records not yet covered",
        "earlier incomplete transaction holds back a later one",
        "records held in temp at the crash",
        *BOUNDARIES,
    ),
)
