"""Run profiles: how many examples, how big a batch, deterministic or not.

- `dev`: seconds; randomized; Hypothesis first, then a small screening batch.
- `ci`: fixed seed, fixed counts, derandomized, no example database writes;
  10,000 screened histories per property and domain; against Spark, screening
  only (one job per 10,000 histories), shrinking only on failure.
- `thorough`: long nightly runs with a database that keeps what it finds.

`max_examples` and `screening_histories` count Hypothesis examples and screened
histories for in-process implementations (the model); `batched_examples` and
`batched_screening_histories` for batched ones (Spark), where a Hypothesis example
is a Spark job (~0.4 s), every shrink step another, and a screening job checks
`screening_batch` histories at once, after a first one of `first_screening_batch`
(`ci`: a tenth), so that a failure most histories show is found, and its file
written, after a short job rather than a whole batch's.

Settable from `[tool.frontier-harness.profiles.NAME]` in the user's
`pyproject.toml` and from the command line (`--seed`).

>>> PROFILES["ci"].derandomize
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


def _at_least(least: int) -> Callable[[Any, attrs.Attribute, Any], None]:
    """An attrs validator: a whole number >= `least` (a count of 0 Hypothesis examples checks nothing)."""

    def check(_: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ValueError(f"{attribute.name} must be a whole number >= {least}, got {value!r}")

    return check


def _flag(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    """An attrs validator: true or false (a TOML string "false" would read as true)."""
    if not isinstance(value, bool):
        raise ValueError(f"{attribute.name} must be true or false, got {value!r}")


def _seconds(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    """An attrs validator: a number of seconds, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{attribute.name} must be a number of seconds >= 0, got {value!r}")


def _path_or_none(_: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{attribute.name} must be a path (a string), got {value!r}")


@attrs.frozen
class Profile:
    """One profile's numbers.

    `screen_first`: against a batched implementation (Spark), the screening lane
    alone runs, and Hypothesis is never called on the implementation; a failure
    shrinks through its recorded choices. `shrink_seconds`: how long shrinking
    one failure with the implementation in the loop may take before the
    smallest failing history so far is written. `shrink_by_calls`: shrinking
    stops after the suite's `shrink_calls` implementation calls instead (`ci`:
    the same file on any machine, loaded or not), `shrink_seconds` only a cap
    that, when it stops shrinking first, is said (`frontier_harness.properties.engine.budget`). `judges_reach`: its counts reach every required hard
    case (`ci` and `thorough`, as audited in docs/required-events.md), so one never generated fails the
    run; in a smaller run (`dev`, or counts lowered on the command line) it is named "not shown", and
    does not fail.
    """

    name: str
    max_examples: int = attrs.field(validator=_at_least(1))
    batched_examples: int = attrs.field(validator=_at_least(1))
    batch_size: int = attrs.field(validator=_at_least(1))
    screening_histories: int = attrs.field(validator=_at_least(0))  # 0: no screening lane
    screening_batch: int = attrs.field(validator=_at_least(1))
    derandomize: bool = attrs.field(validator=_flag)
    batched_screening_histories: int = attrs.field(default=0, validator=_at_least(0))
    seed: int = attrs.field(default=0, validator=_at_least(0))
    database: str | None = attrs.field(default=None, validator=_path_or_none)
    screen_first: bool = attrs.field(default=False, validator=_flag)
    shrink_seconds: float = attrs.field(default=60.0, validator=_seconds)
    judges_reach: bool = attrs.field(default=True, validator=_flag)
    shrink_by_calls: bool = attrs.field(default=False, validator=_flag)
    first_screening_batch: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_at_least(1))
    )

    def screening_call(self, first: bool) -> int:
        """How many histories a screening call checks: `first_screening_batch` first (when set; never more
        than a batch), then `screening_batch` at a time.

        >>> [PROFILES["ci"].screening_call(first) for first in (True, False)]
        [1000, 10000]
        >>> attrs.evolve(PROFILES["ci"], screening_batch=400).screening_call(True)
        400
        """
        if first and self.first_screening_batch is not None:
            return min(self.first_screening_batch, self.screening_batch)
        return self.screening_batch

    def seeded(self, seed: int | None) -> Profile:
        """This profile with `seed` (a `--seed` given); `None` keeps the profile's own (one set in
        `[tool.frontier-harness.profiles.NAME]`).

        >>> attrs.evolve(PROFILES["ci"], seed=7).seeded(None).seed, PROFILES["ci"].seeded(3).seed
        (7, 3)
        """
        return self if seed is None else attrs.evolve(self, seed=seed)


PROFILES = {
    "dev": Profile(
        "dev",
        max_examples=30,
        batched_examples=8,
        batch_size=8,
        screening_histories=500,
        screening_batch=500,
        derandomize=False,
        batched_screening_histories=500,
        shrink_seconds=30.0,
        judges_reach=False,
    ),
    "ci": Profile(
        "ci",
        max_examples=60,
        batched_examples=15,
        batch_size=8,
        screening_histories=2_000,
        screening_batch=10_000,
        derandomize=True,
        batched_screening_histories=10_000,
        first_screening_batch=1_000,
        screen_first=True,
        shrink_by_calls=True,
        shrink_seconds=900.0,  # a cap behind the suites' shrink_calls: hit, it is said
    ),
    "thorough": Profile(
        "thorough",
        max_examples=1000,
        batched_examples=200,
        batch_size=12,
        screening_histories=100_000,
        screening_batch=20_000,
        derandomize=False,
        batched_screening_histories=100_000,
        first_screening_batch=2_000,
        database=".frontier-harness/examples",
        screen_first=True,
        shrink_seconds=300.0,
    ),
}
