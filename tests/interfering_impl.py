"""A user's batched collections implementation whose histories interfere only in one call.

Importable as `--impl tests.interfering_impl:factory`. It caches by datum instead of by
history: two histories of one call that update the same datum collide and raise; each
history alone is answered correctly (the model's own observation). A join or a dedup that
forgets `history_id` fails the same way.
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


def factory() -> DataKeyedCache:
    return DataKeyedCache()
