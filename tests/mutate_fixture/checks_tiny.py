"""The pytest command `tests/test_mutate.py` judges tiny.py's mutants with (`mutate --tests`): the
examples the tiny suite's rule checks, written out. Not collected by the project's run (not `test_*`)."""

from tests.mutate_fixture.tiny import latest_before


def test_latest_before_keeps_what_is_at_or_before_the_bound():
    assert latest_before([1, 4, 2], 3) == 2
    assert latest_before([3], 3) == 3
    assert latest_before([5], 3) is None
