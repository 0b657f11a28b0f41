"""Equivalent mutants, named with why: a survivor listed in an `--equivalent` file is *equivalent*, out of the
score, never a survivor; a listed mutant that was killed, or that no mutant matches, is a stale entry.

A mutant no test can tell from the code is no weakness of the checks: the usual score leaves it out of the
denominator. Each entry names its file, the source line as it reads (stripped), the change as `mutate`
lists it (`original -> mutated`) and why no correct check can tell it apart; line numbers are left out, as
they move with every edit. A TOML file of `[[mutant]]` tables:

    [[mutant]]
    file = "properties/checks/streaming/committed.py"
    source = "found |= left & set().union(*(obs[(s, StreamingLabel.COMMITS)] for s in steps[i + 1 :]))"
    change = "i + 1 -> i"
    why = "`left` excludes the batches committed at the crash step itself, so adding that step adds nothing"

>>> from frontier_harness.properties.mutate.mutants import Mutant
>>> from frontier_harness.properties.mutate.results import MutantResult, MutationRun
>>> m = Mutant("a.py", 2, 0, "compare", 0, "a", 0, "x < y", "x <= y", True, 2, 2)
>>> entry = Equivalent("a.py", "return x < y", "x < y -> x <= y", "x never equals y")
>>> marked, stale = apply(MutationRun("a", "ci", 0, (MutantResult(m, SURVIVED),), 1.0, 0), [entry],
...                       {"a.py": ["def f(x, y):", "    return x < y"]})
>>> [(r.status, r.message) for r in marked.results], stale
([('equivalent', 'x never equals y')], [])
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.mutate.results import EQUIVALENT, KILLED, SURVIVED, MutationRun


class BadEquivalents(HarnessError):
    """An `--equivalent` file that cannot be read as a list of `[[mutant]]` tables with every field."""


@attrs.frozen
class Equivalent:
    """One mutant named equivalent: its file, its source line (stripped), its change, and why."""

    file: str
    source: str
    change: str
    why: str

    def describe(self) -> str:
        return f"{self.file}  {self.source!r}  {self.change}"


def load(path: Path) -> list[Equivalent]:
    """The entries of an `--equivalent` file; `BadEquivalents` naming the file and the entry otherwise."""
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadEquivalents(f"--equivalent {str(path)!r}: {exc}") from exc
    fields = [a.name for a in attrs.fields(Equivalent)]
    entries = []
    for i, table in enumerate(tables):
        if not isinstance(table, dict) or sorted(table) != sorted(fields):
            raise BadEquivalents(
                f"--equivalent {str(path)!r}: [[mutant]] #{i + 1} needs exactly {fields}: {table!r}"
            )
        entries.append(Equivalent(**{k: str(table[k]) for k in fields}))
    return entries


def apply(
    run: MutationRun, entries: Sequence[Equivalent], sources: Mapping[str, Sequence[str]]
) -> tuple[MutationRun, list[str]]:
    """`run` with each survivor an entry names marked equivalent (its `message` the entry's why), and the
    stale entries of the files `sources` holds (the run's modules, each as lines): those that matched a
    killed mutant (not equivalent after all) or none."""
    by_key = {(e.file, e.source, e.change): e for e in entries}
    matched: dict[tuple, set[str]] = {}
    results = []
    for r in run.results:
        m = r.mutant
        lines = sources.get(m.path, ())
        source = lines[m.line - 1].strip() if 0 < m.line <= len(lines) else ""
        key = (m.path, source, f"{m.original} -> {m.mutated}")
        entry = by_key.get(key)
        if entry is not None:
            matched.setdefault(key, set()).add(r.status)
        if entry is not None and r.status == SURVIVED:
            r = attrs.evolve(r, status=EQUIVALENT, message=entry.why)
        results.append(r)
    stale = [
        f"{e.describe()}: "
        + ("killed, so not equivalent" if KILLED in matched.get(k, ()) else "no mutant matches it")
        for k, e in by_key.items()
        if e.file in sources and (k not in matched or KILLED in matched[k])
    ]
    return attrs.evolve(run, results=tuple(results)), stale
