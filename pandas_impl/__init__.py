"""A worked example of checking *your* pipeline: the collections capability in pandas.

Run the suite against it with

    frontier-harness check --suite collections --impl pandas_impl:factory

It is a `frontier_harness.Implementation` (subclassing it gives the defaults), and it imports only
from `frontier_harness`, as your own code would, whose `observe_collections(domain, histories)` takes a batch of histories of one time
domain and returns, per history, a dict keyed by `(step, label)`:
`(i, "read")` -> frozenset of `(data, count)` for the read at action `i`, and
`(len(actions), "final")` -> frozenset of `(data, time, diff)` for the final
consolidated collection. Like spark_impl, it has its own encoding of the time
orders (`orders.py`) and never calls the model.
"""

from .collection import PandasCollections


def factory() -> PandasCollections:
    """What `--impl pandas_impl:factory` calls."""
    return PandasCollections()
