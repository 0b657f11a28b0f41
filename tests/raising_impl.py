"""A user's own collections implementation with a crash, and some that break the observation contract.

Importable as `--impl tests.raising_impl:NAME`. `factory` looks each read up in a dict
of the times written so far, so a read at a time never written raises `KeyError` from
the line marked below (the diagnostics tests find that line in every report).
"""

from __future__ import annotations

import sys
from typing import Any

from frontier_harness.properties.checks.time import collections
from frontier_harness.properties.engine.implementation import Implementation, Speed


class LookupPipeline(Implementation):
    """Correct answers, except that a read at a time nothing was written at raises."""

    name = "lookup"

    def observe_collections(self, domain: Any, histories: Any) -> list:
        return [self.observe_one(h) for h in histories]

    def observe_one(self, history: Any) -> dict:
        written: dict = {}
        for action in history.actions:
            if action.name == "update":
                written[action.args["time"]] = action.args["data"]
            elif action.name == "read":
                written[action.args["time"]]  # noqa: B018  RAISES-HERE
        return collections.observe(history)


class OneShort(Implementation):
    """Contract violation: one observation fewer than histories."""

    name = "one-short"

    def observe_collections(self, domain: Any, histories: Any) -> list:
        return [collections.observe(h) for h in histories][:-1]


class NotAList(Implementation):
    """Contract violation: a dict of observations by position instead of a list."""

    name = "not-a-list"

    def observe_collections(self, domain: Any, histories: Any) -> Any:
        return {i: collections.observe(h) for i, h in enumerate(histories)}


class NoFinal(Implementation):
    """Contract violation: the final consolidated collection left out of every observation."""

    name = "no-final"

    def observe_collections(self, domain: Any, histories: Any) -> list:
        return [{k: v for k, v in collections.observe(h).items() if k[1] != "final"} for h in histories]


class Batched(LookupPipeline):
    """As `factory`, at batched speed (so `ci` screens first), counting its calls."""

    speed = Speed.BATCHED
    calls = 0

    def observe_collections(self, domain: Any, histories: Any) -> list:
        Batched.calls += 1
        return super().observe_collections(domain, histories)


def factory() -> LookupPipeline:
    return LookupPipeline()


def one_short() -> OneShort:
    return OneShort()


def not_a_list() -> NotAList:
    return NotAList()


def no_final() -> NoFinal:
    return NoFinal()


class FiveReads(Implementation):
    """Batched (each call a job, as Spark's are), counting its calls: raises on a history with five reads at
    one time (1 of the 10,000 histories `ci` screens in collections on total, seed 0)."""

    name = "five-reads"
    speed = Speed.BATCHED

    def __init__(self) -> None:
        self.calls = 0

    def observe_collections(self, domain: Any, histories: Any) -> list:
        self.calls += 1
        for h in histories:
            times = [a.args["time"] for a in h.actions if a.name == "read"]
            if any(times.count(t) >= 5 for t in times):
                raise ValueError(f"five reads at one time: {h.actions}")  # FIVE-READS
        return [collections.observe(h) for h in histories]


def five_reads() -> FiveReads:
    return FiveReads()


def spark_five_reads() -> Any:
    """The Spark pipeline with the same planted crash (raised on the driver before the job), to time `ci`
    from start to the counterexample file against a batched engine."""
    from frontier_harness.properties.adapters.spark import SparkImplementation

    class Impl(SparkImplementation):
        def observe_collections(self, domain: Any, histories: Any) -> list:
            for h in histories:
                times = [a.args["time"] for a in h.actions if a.name == "read"]
                if any(times.count(t) >= 5 for t in times):
                    raise ValueError("five reads at one time")  # FIVE-READS
            return super().observe_collections(domain, histories)

    return Impl()


class ExitsOnRead(Implementation):
    """Exits the process (`sys.exit(0)`) on a history that reads: its failure, never the run's exit 0."""

    name = "exits-on-read"

    def observe_collections(self, domain: Any, histories: Any) -> list:
        if any(a.name == "read" for h in histories for a in h.actions):
            sys.exit(0)  # EXITS-HERE
        return [collections.observe(h) for h in histories]


def exits_on_read() -> ExitsOnRead:
    return ExitsOnRead()


def factory_raises() -> Implementation:
    return {}["settings"]  # FACTORY-RAISES-HERE


def _lookup(domain: Any, histories: Any) -> list:
    return LookupPipeline().observe_collections(domain, histories)


class StaticLookup(Implementation):
    """`factory`'s crash through a static method: no frame of it has `self` (still the implementation's)."""

    name = "static-lookup"
    observe_collections = staticmethod(_lookup)


def static_lookup() -> StaticLookup:
    return StaticLookup()


class CountsNotRows(Implementation):
    """Answers a number where the model answers a set of rows: a wrong answer, shown as it is."""

    name = "counts-not-rows"

    def observe_collections(self, domain: Any, histories: Any) -> list:
        return [{key: len(rows) for key, rows in collections.observe(h).items()} for h in histories]


def counts_not_rows() -> CountsNotRows:
    return CountsNotRows()


class PrepareRaises(LookupPipeline):
    """`prepare()` raises (a setting it reads is missing): its contract broken, never an internal error."""

    def prepare(self) -> None:
        {}["settings"]  # noqa: B018  PREPARE-RAISES-HERE


def prepare_raises() -> PrepareRaises:
    return PrepareRaises()


class RecoverRaises(LookupPipeline):
    """Its connection drops on the first call (infrastructure), and `recover()`, called before the runner's
    one retry, raises: its contract broken, never an internal error nor the connection's exit 3."""

    def observe_collections(self, domain: Any, histories: Any) -> list:
        raise ConnectionError("the pipeline's server went away")

    def recover(self) -> None:
        raise RuntimeError("cannot reconnect: no address configured")  # RECOVER-RAISES-HERE


def recover_raises() -> RecoverRaises:
    return RecoverRaises()


class ClassifierRaises(LookupPipeline):
    """Its connection drops on the first call, and `infrastructure_failure`, asked whether that is
    infrastructure, raises: its contract broken (exit 2, its line), never an internal error (exit 4)."""

    def observe_collections(self, domain: Any, histories: Any) -> list:
        raise ConnectionError("the pipeline's server went away")

    def infrastructure_failure(self, exc: Exception) -> str | None:
        return f"code {exc.args[1]}"  # CLASSIFIER-RAISES-HERE: this ConnectionError has no code


def classifier_raises() -> ClassifierRaises:
    return ClassifierRaises()


class ClassifierExits(ClassifierRaises):
    """`infrastructure_failure` exits the process (`sys.exit(3)`) instead of answering: its failure (exit 2,
    its line), never the run's exit 3 nor an internal error."""

    def infrastructure_failure(self, exc: Exception) -> str | None:
        sys.exit(3)  # CLASSIFIER-EXITS-HERE


def classifier_exits() -> ClassifierExits:
    return ClassifierExits()
