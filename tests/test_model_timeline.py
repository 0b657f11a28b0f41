"""Timelines: source options, and every multi-timeline dataflow rejected before it runs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontier_harness.model.catalog.catalog import (
    Catalog,
    Constant,
    Index,
    MaterializedView,
    RefreshAt,
    RefreshEvery,
    Select,
    Source,
    Subscribe,
    Table,
    View,
)
from frontier_harness.model.catalog.plan import Get, Join, Union
from frontier_harness.model.catalog.timeline import Counter, EpochMilliseconds, External, User
from frontier_harness.model.catalog.timeline_rules import source_timeline
from frontier_harness.model.errors import (
    DuplicateObject,
    InvalidDependency,
    InvalidRefresh,
    InvalidSourceOption,
    TimelineError,
    UnknownObject,
)

MESSAGE = "multiple timelines within one dataflow are not supported"


def test_source_timelines():
    assert source_timeline("postgres", "p") == EpochMilliseconds()
    assert source_timeline("load_generator", "g") == EpochMilliseconds()
    assert source_timeline("cdc", "c") == External("c")
    assert source_timeline("cdc", "c", epoch_ms_timeline=True) == EpochMilliseconds()
    assert source_timeline("kafka", "k", consistency_topic=("b", "t")) == Counter("b", "t")
    assert source_timeline("cdc", "c", timeline="mine") == User("mine")


@pytest.mark.parametrize(
    "kind, options, named",
    [
        ("kafka", {"epoch_ms_timeline": True}, "epoch_ms_timeline"),
        ("cdc", {"consistency_topic": ("b", "t")}, "consistency_topic"),
        ("cdc", {"timeline": "x", "epoch_ms_timeline": True}, "epoch_ms_timeline', 'timeline"),
        ("mysql", {}, "kind"),
    ],
)
def test_bad_source_options(kind, options, named):
    with pytest.raises(InvalidSourceOption, match=named):
        source_timeline(kind, "s", **options)


def sources() -> Catalog:
    c = Catalog().add(Table("t")).add(Constant("k", [(1,)]))
    for source in (
        Source.create("c1", "cdc"),
        Source.create("c2", "cdc"),
        Source.create("e", "cdc", epoch_ms_timeline=True),
        Source.create("d", "kafka", consistency_topic=("b", "x")),
        Source.create("u1", "cdc", timeline="shared"),
        Source.create("u2", "kafka", timeline="shared"),
    ):
        c = c.add(source)
    return c


@pytest.mark.parametrize(
    "make",
    [
        lambda plan: View("x", plan),
        lambda plan: MaterializedView("x", plan),
        lambda plan: Subscribe("x", plan),
        lambda plan: Select("x", plan),
    ],
)
def test_every_dataflow_kind_is_checked(make):
    with pytest.raises(TimelineError) as error:
        sources().add(make(Join(Get("t"), Get("c1"), ())))
    assert str(error.value) == (
        f"{MESSAGE}: 'x' depends on 'c1' (External(name='c1')), 't' (EpochMilliseconds())"
    )
    assert error.value.timelines == {"c1": External("c1"), "t": EpochMilliseconds()}


def test_joinable_groups():
    c = sources()
    for name, inputs in {
        "self": ["c1", "c1"],
        "epoch": ["t", "e", "k"],
        "user": ["u1", "u2"],
        "only_k": ["k"],
    }.items():
        c = c.add(View(name, Union(tuple(Get(i) for i in inputs))))
    assert [c.timeline_of(n) for n in ("self", "epoch", "user", "only_k")] == [
        External("c1"),
        EpochMilliseconds(),
        User("shared"),
        None,
    ]
    with pytest.raises(TimelineError, match="'c1'.*'c2'"):
        c.add(View("two_cdc", Union((Get("c1"), Get("c2")))))


def test_transitive_inputs_are_checked_and_all_named():
    c = sources().add(View("vt", Get("t"))).add(MaterializedView("md", Get("d"))).add(Index("it", "vt"))
    with pytest.raises(TimelineError) as error:
        c.add(Select("q", Union((Get("vt"), Get("md")))))
    assert error.value.timelines == {"d": Counter("b", "x"), "t": EpochMilliseconds()}
    assert "'d' (Counter(broker='b', topic='x')), 't' (EpochMilliseconds())" in str(error.value)


def test_catalog_errors():
    c = sources().add(Index("i", "t")).add(Subscribe("s", Get("t")))
    with pytest.raises(DuplicateObject, match="'t'"):
        c.add(Table("t"))
    with pytest.raises(UnknownObject, match="'nope'"):
        c.add(View("v", Get("nope")))
    with pytest.raises(InvalidDependency, match="'v' cannot read from 'i': Index objects"):
        c.add(View("v", Get("i")))
    with pytest.raises(InvalidDependency, match="'j' cannot read from 's': Subscribe objects"):
        c.add(Index("j", "s"))
    with pytest.raises(InvalidSourceOption, match="'mysql'"):
        Source("m", "mysql", EpochMilliseconds())
    with pytest.raises(InvalidRefresh, match="interval must be positive"):
        RefreshEvery(0, 0)
    with pytest.raises(InvalidRefresh, match="at must be non-negative"):
        RefreshAt(-1)


TIMELINES = [EpochMilliseconds(), External("c"), Counter("b", "x"), User("u"), None]


@st.composite
def catalogs(draw):
    """Leaves with drawn timelines, then views over drawn subsets of what exists."""
    leaves = draw(st.lists(st.sampled_from(TIMELINES), min_size=1, max_size=4))
    c, timelines = Catalog(), {}
    for i, timeline in enumerate(leaves):
        name = f"s{i}"
        c = c.add(Constant(name) if timeline is None else Source(name, "kafka", timeline))
        timelines[name] = timeline
    return c, timelines


@settings(max_examples=150, deadline=None, database=None)
@given(catalogs(), st.data())
def test_generated_plans_are_rejected_iff_they_span_several_timelines(catalog_and_timelines, data):
    catalog, timelines = catalog_and_timelines
    for step in range(3):
        names = [o.name for o in catalog.objects]
        inputs = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        view = View(f"v{step}", Union(tuple(Get(n) for n in inputs)))
        leaves = {m for n in inputs for m in (n, *catalog.transitive_inputs(n)) if m in timelines}
        present = {m: timelines[m] for m in leaves if timelines[m] is not None}
        if len(set(present.values())) > 1:
            with pytest.raises(TimelineError, match=MESSAGE) as error:
                catalog.add(view)
            assert error.value.timelines == present
        else:
            catalog = catalog.add(view)
            assert catalog.timeline_of(view.name) == next(iter(set(present.values())), None)
