"""A user's batched collections implementations whose histories interfere only in one call.

Importable as `--impl tests.interfering_impl:factory`. It caches by datum instead of by
history: two histories of one call that update the same datum collide and raise; each
history alone is answered correctly (the model's own observation). A join or a dedup that
forgets `history_id` fails the same way. `--impl tests.interfering_impl:answers` keeps answers by a
history's first datum: a later history of the call that updates the same datum first is answered with
the earlier one's, a wrong answer, never a raise; alone, each is answered right.
"""

from __future__ import annotations

from typing import Any

from frontier_harness.properties.checks.time import collections
from frontier_harness.properties.engine.implementation import Implementation, Speed


class DataKeyedCache(Implementation):
    """Correct one history at a time; a datum two histories of one call update collides in the cache."""

    name = "data-keyed-cache"
    speed = Speed.BATCHED

    def observe_collections(self, domain: Any, histories: Any) -> list:
        owner: dict[Any, int] = {}  # bug: keyed by datum, not by (history, datum)
        for i, history in enumerate(histories):
            for action in history.actions:
                if action.name == "update" and owner.setdefault(action.args["data"], i) != i:
                    raise KeyError(f"datum {action.args['data']!r} is cached already")  # COLLIDES
        return [collections.observe(h) for h in histories]


class AnswersKeyedByDatum(Implementation):
    """Correct one history at a time; a history whose first datum an earlier one of the call updated first
    gets that one's answer."""

    name = "answers-keyed-by-datum"
    speed = Speed.BATCHED

    def observe_collections(self, domain: Any, histories: Any) -> list:
        answers: dict[Any, Any] = {}  # bug: keyed by the first datum, not by history
        observed = []
        for history in histories:
            first = next((a.args["data"] for a in history.actions if a.name == "update"), None)
            answer = collections.observe(history)
            observed.append(answer if first is None else answers.setdefault(first, answer))
        return observed


def factory() -> DataKeyedCache:
    return DataKeyedCache()


def answers() -> AnswersKeyedByDatum:
    return AnswersKeyedByDatum()
