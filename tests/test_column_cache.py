"""`spark_impl.column_cache.per_session`: an expression built once is rebuilt whenever what built it changed."""

from frontier_harness.spark_impl import column_cache, session
from frontier_harness.spark_impl.reclocking import summary


class Total:
    name = "total"


class Other:
    name = "product(total,total)"


def counting_builder(built: list):
    @column_cache.per_session
    def expression(domain):
        built.append(summary.is_transactional(domain))
        return len(built)

    return expression


def test_built_once_per_domain_name():
    built: list = []
    expression = counting_builder(built)
    answers = [expression(domain) for domain in (Total(), Total(), Other(), Total())]
    assert answers == [1, 1, 2, 1]


def test_a_rebound_spark_impl_function_builds_afresh(monkeypatch):
    built: list = []
    expression = counting_builder(built)
    assert expression(Total()) == 1
    monkeypatch.setattr(summary, "is_transactional", lambda domain: True)  # a planted bug, or a mutant
    assert expression(Total()) == 2
    assert built == [False, True]


def test_a_new_session_builds_afresh(monkeypatch):
    built: list = []
    expression = counting_builder(built)
    assert expression(Total()) == 1
    monkeypatch.setattr(session, "_starts", session.starts() + 1)  # the old JVM's objects are gone
    assert expression(Total()) == 2
