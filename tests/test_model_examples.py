"""Every public function, method and property of the time domains and antichains carries a runnable
example (a doctest, run by pytest's `--doctest-modules`), as timely-dataflow's `frontier.rs` does."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from types import ModuleType

import pytest

from frontier_harness.model.time import antichain, domains

MODULES = (domains, antichain)


def _public_members(module: ModuleType) -> Iterator[tuple[str, object]]:
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            yield name, value
        elif inspect.isclass(value):
            for attr, member in vars(value).items():
                if not attr.startswith("_") and _is_routine(member):
                    yield f"{name}.{attr}", member


def _is_routine(member: object) -> bool:
    return inspect.isfunction(member) or isinstance(member, (property, classmethod, staticmethod))


def _docstring(member: object) -> str:
    target = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
    return inspect.getdoc(target) or ""


MEMBERS = [(m.__name__, name, member) for m in MODULES for name, member in _public_members(m)]


@pytest.mark.parametrize(("module", "name", "member"), MEMBERS, ids=[f"{m}:{n}" for m, n, _ in MEMBERS])
def test_every_public_member_has_a_runnable_example(module, name, member):
    assert ">>>" in _docstring(member), f"{module}.{name} has no doctest example"


def test_the_walk_finds_the_members_it_should():
    names = {name for _, name, _ in MEMBERS}
    assert {"parse_domain", "Domain.join", "Product.name", "Antichain.of", "advance_by"} <= names
    assert "MutableAntichain.support" in names and len(MEMBERS) >= 55
