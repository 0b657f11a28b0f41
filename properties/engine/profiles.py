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
`screening_batch` histories at once.

Settable from `[tool.frontier-harness.profiles.NAME]` in the user's
`pyproject.toml` and from the command line (`--seed`).

>>> PROFILES["ci"].derandomize
True
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Profile:
    """One profile's numbers.

    `screen_first`: against a batched implementation (Spark), the screening lane
    alone runs, and Hypothesis is never called on the implementation; a failure
    shrinks through its recorded choices. `shrink_seconds`: how long shrinking
    one failure with the implementation in the loop may take before the
    smallest failing history so far is written. `judges_reach`: its counts reach every required hard
    case (`ci` and `thorough`, as audited in docs/required-events.md), so one never generated fails the
    run; in a smaller run (`dev`, or counts lowered on the command line) it is named "not shown", and
    does not fail.
    """

    name: str
    max_examples: int
    batched_examples: int
    batch_size: int
    screening_histories: int
    screening_batch: int
    derandomize: bool
    batched_screening_histories: int = 0
    seed: int = 0
    database: str | None = None
    screen_first: bool = False
    shrink_seconds: float = 60.0
    judges_reach: bool = True


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
        screen_first=True,
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
        database=".frontier-harness/examples",
        screen_first=True,
        shrink_seconds=300.0,
    ),
}
