"""The `checkpoint` suite can fail for every law `validate-checkpoint` names, through its own search and shrinking.

The suite holds `check_log` to the laws' restatement (`properties/checks/streaming/oracles/checkpoint_laws.py`)
on every log it draws, and its generator damages logs to break each law. A one-line change to
`checkpoint_log/laws.py` that tolerates a second uncommitted batch passed `check --suite checkpoint
--profile ci` before (issue 44): planted here as that line, it fails the suite small.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from frontier_harness.properties.adapters.model import ModelImplementation
from frontier_harness.properties.checks.registry import get_suite
from frontier_harness.properties.checks.streaming.checkpoint_log import laws
from frontier_harness.properties.checks.streaming.checkpoint_log.coverage import LAWS
from frontier_harness.properties.checks.streaming.strategies.checkpoints import DAMAGES, LOG_DAMAGES
from frontier_harness.properties.engine.profiles import PROFILES
from frontier_harness.properties.engine.runner import SuiteRequest, run_suite

LAW_LINE = "if batch != last and batch not in committed:"


def _planted(old: str, new: str):
    """`check_log` of `laws.py` with the line `old` replaced by `new` (a mutant of the real module)."""
    source = Path(laws.__file__).read_text()
    assert source.count(old) == 1, f"the line to mutate is gone from laws.py: {old!r}"
    module = types.ModuleType("planted_laws")
    exec(compile(source.replace(old, new), "planted_laws.py", "exec"), module.__dict__)
    return module.check_log


def _failures(monkeypatch, check_log) -> list:
    import frontier_harness.properties.checks.streaming.checkpoint as suite

    monkeypatch.setattr(suite, "check_log", check_log)
    result = run_suite(
        SuiteRequest(
            get_suite("checkpoint"),
            ModelImplementation(),
            "model",
            PROFILES["ci"],
            seed=0,
            domains=("total",),
        )
    )
    return [r.failure for r in result.results if r.failure]


def test_every_law_has_a_damage_and_a_required_event():
    damaged = set(DAMAGES.values()) | {law for law, _ in LOG_DAMAGES.values()}
    assert damaged == set(LAWS)
    required = set(get_suite("checkpoint").required_events)
    assert {f"breaks {law}" for law in LAWS} <= required


def test_laws_that_tolerate_a_second_uncommitted_batch_fail_the_suite_small(monkeypatch):
    planted = _planted(LAW_LINE, "if batch < last - 1 and batch not in committed:")
    [failure] = _failures(monkeypatch, planted)
    assert failure.message == "the laws disagree with their restatement: they miss one uncommitted batch"
    assert len(failure.history.actions) <= 8, failure.history.actions


MUTANTS = [
    # the watermark and clock laws share one rule: a reading 1 ms back no longer counts as gone back
    (
        "went_back",
        "and ms < newest[1] else None",
        "and ms < newest[1] - 1 else None",
        "batch_metadata",
        ("watermark monotone", "timestamp monotone"),
    ),
    # the state half, one law each: a version a committed batch made may be missing
    (
        "state_version_made",
        "if batch + 1 not in versions:",
        "if batch + 2 not in versions and False:",
        "state_laws",
        ("state version made",),
    ),
    # a delta missing below the version, with no snapshot under it, is taken for rebuildable
    (
        "state_rebuildable",
        'return missing, f"{missing} is missing (and no {base} at or below version {at} follows)"',
        "return None",
        "state_laws",
        ("state rebuildable",),
    ),
    # the partitions the state has are never compared with the pinned ones or the metadata's
    (
        "state_partitions",
        "if partitions == list(range(count)):",
        "if True:",
        "state_laws",
        ("state partitions",),
    ),
    # an entry exactly at the batch's watermark no longer counts as kept past it
    (
        "state_evicted",
        "if bound is None or watermark is None or bound > watermark:",
        "if bound is None or watermark is None or bound >= watermark:",
        "state_laws",
        ("state evicted",),
    ),
]


@pytest.mark.parametrize("name,old,new,module,named", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_law_of_the_frontier_or_the_state_weakened_fails_the_suite_small_naming_it(
    name, old, new, module, named, monkeypatch
):
    """Each law of the frontier and of the state half, weakened in its module for the run (`check_log`
    reaches them through `laws`): the suite's own search finds a log the law misses, shrunk small."""
    import importlib

    target = importlib.import_module(f"frontier_harness.properties.checks.streaming.checkpoint_log.{module}")
    source = Path(target.__file__).read_text()
    assert source.count(old) == 1, old
    mutant = types.ModuleType(f"planted_{module}")
    exec(compile(source.replace(old, new), f"planted_{module}.py", "exec"), mutant.__dict__)
    for attr in ("BatchMetadata", "state_laws", "partition_laws", "eviction_law"):
        if hasattr(mutant, attr):
            monkeypatch.setattr(laws, attr, getattr(mutant, attr))
    failures = _failures(monkeypatch, laws.check_log)
    assert failures, f"{name}: the weakened law passed the suite"
    for failure in failures:
        assert any(law in failure.message for law in named), failure.message
        assert len(failure.history.actions) <= 12, (name, failure.history.actions)
