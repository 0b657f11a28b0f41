"""Run profiles: how many examples, how big a batch, deterministic or not.

- `dev`: seconds; randomized.
- `ci`: fixed seed, fixed example counts, derandomized, no example database writes.
- `thorough`: long nightly runs with a database that keeps what it finds.

`max_examples` counts Hypothesis examples for suites checked against the model
itself; `spark_examples` for suites checked against another implementation,
where every example is a Spark job (~0.4 s) and every shrink step another.

Settable from `[tool.frontier-harness.profiles.NAME]` in the user's
`pyproject.toml` and from the command line (`--seed`).

>>> PROFILES["ci"].derandomize
True
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Profile:
    """One profile's numbers."""

    name: str
    max_examples: int
    spark_examples: int
    batch_size: int
    screening_histories: int
    screening_batch: int
    derandomize: bool
    seed: int = 0
    database: str | None = None


PROFILES = {
    "dev": Profile(
        "dev",
        max_examples=30,
        spark_examples=8,
        batch_size=8,
        screening_histories=500,
        screening_batch=500,
        derandomize=False,
    ),
    "ci": Profile(
        "ci",
        max_examples=60,
        spark_examples=15,
        batch_size=8,
        screening_histories=2000,
        screening_batch=2000,
        derandomize=True,
    ),
    "thorough": Profile(
        "thorough",
        max_examples=1000,
        spark_examples=200,
        batch_size=12,
        screening_histories=100_000,
        screening_batch=20_000,
        derandomize=False,
        database=".frontier-harness/examples",
    ),
}
