"""A difference between what Spark keys the old job's checkpoint on and what the new job plans, with its
verdict, the rule it comes from and where Spark states that rule.

A `Difference` says what changed (`area`, `what`), its `Verdict`, the `rule` in one sentence and its
`source` (Spark's source file and function, a JIRA, or Spark's guide); for `restart fails`, the `error`
Spark raises (its error class, or the exception and message where Spark gives none) and the smallest
`fix`; for `restarts, results change`, the `rows` that mix old and new logic. `check` orders the
failures as Spark meets them on a restart (the sources when the offsets are read, then the operators,
the key and the value schemas when the first batch is planned, then each operator's state when it runs),
so the first is the one Spark raises.

>>> d = Difference(Area.VALUE, "count -> sum", Verdict.RESULTS_CHANGE, "a buffer of one long", SCHEMA_CHECK)
>>> d.verdict.value, d.failing
('restarts, results change', True)
"""

from __future__ import annotations

import attrs

from frontier_harness.model.vocabulary.upgrade import Area, Verdict

SPARK = "Spark: sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/"
GUIDE = (
    "Spark's guide, Recovery Semantics after Changes in a Streaming Query "
    "(docs/streaming/apis-on-dataframes-and-datasets.md)"
)
OFFSET_SEQ = SPARK + "checkpointing/OffsetSeq.scala, OffsetSeq.toStreamProgress"
PINNED = SPARK + "checkpointing/OffsetSeq.scala, OffsetSeqMetadata.setSessionConf (relevantSQLConfs)"
OPERATOR_CHECK = SPARK + "runtime/IncrementalExecution.scala, checkOperatorValidWithMetadata (SPARK-46906)"
UNCHECKED = (
    OPERATOR_CHECK
    + ", which checks only operators with metadata (state/<id>/_metadata/, written since Spark "
    "4.0); state/HDFSBackedStateStoreProvider.scala, loadMap (measured: tests/test_upgrade_matrix.py, a "
    "checkpoint Spark 3.5 wrote)"
)
SCHEMA_CHECK = SPARK + "state/StateSchemaCompatibilityChecker.scala, check (SPARK-27237)"
STATE_KEY = (
    SPARK + "operators/stateful/statefulOperators.scala: the state is keyed by the operator's keyExpressions "
    "and holds the aggregation buffer (StreamingAggregationStateManager); nothing records how they are computed"
)
WATERMARK = (
    SPARK
    + "runtime/MicroBatchExecution.scala: a restart restores batchWatermarkMs from offsets/N; the delay "
    "is the new plan's EventTimeWatermark"
)
POLICY = PINNED + "; SPARK-24730 (multipleWatermarkPolicy)"
FILE_SOURCE = (
    SPARK + "runtime/FileStreamSource.scala: the files already read are known by path (seenFiles, "
    "restored from the source log sources/<i>/)"
)
NOT_RECORDED = "Spark records no output mode and no output columns in a checkpoint (OffsetSeqMetadata, OperatorStateMetadataV1)"
OPERATORS_NOT_MATCH = "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
MISSING_STATE = "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"  # Spark 4.3 (SPARK-54307)
KEY_NOT_COMPATIBLE = "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
VALUE_NOT_COMPATIBLE = "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
CANNOT_LOAD = "CANNOT_LOAD_STATE_STORE"
# The order a restart meets each check: the offsets are read first, then the first batch is planned, then
# it runs, loading each operator's state.
SPARK_ORDER: dict[str, int] = {Area.SOURCES: 0, Area.OPERATORS: 1, Area.KEY: 2, Area.VALUE: 3, Area.STATE: 4}


@attrs.frozen
class Difference:
    """One change between the old job and the new one, judged (see the module docstring)."""

    area: str
    what: str
    verdict: Verdict
    rule: str
    source: str
    error: str | None = None
    fix: str | None = None
    rows: str | None = None

    @property
    def failing(self) -> bool:
        """Whether the verdict fails the check (anything but safe)."""
        return self.verdict is not Verdict.SAFE

    def line(self) -> str:
        """The difference in one paragraph: what, the verdict, then the error and fix or the rows, the rule
        and its source."""
        parts = [f"{self.area}: {self.what}: {self.verdict.value}"]
        if self.error:
            parts.append(f"Spark raises {self.error}; to avoid it: {self.fix}")
        if self.rows:
            parts.append(f"rows: {self.rows}")
        parts.append(f"rule: {self.rule} ({self.source})")
        return "; ".join(parts)


@attrs.frozen
class Comparison:
    """Every difference found, what was compared (each a count, never none), and what one side did not
    record and so was not compared."""

    differences: tuple[Difference, ...]
    compared: tuple[str, ...]
    not_compared: tuple[str, ...] = ()

    def outcome(self) -> Verdict:
        """The restart's outcome the differences predict: it fails if one fails, else it changes results if
        one does, else it is safe."""
        verdicts = {d.verdict for d in self.differences}
        for verdict in (Verdict.RESTART_FAILS, Verdict.RESULTS_CHANGE):
            if verdict in verdicts:
                return verdict
        return Verdict.SAFE

    def error(self) -> str | None:
        """The error Spark raises first on the restart (`SPARK_ORDER`), or None when it restarts."""
        fails = [d for d in self.differences if d.verdict is Verdict.RESTART_FAILS]
        fails.sort(key=lambda d: SPARK_ORDER.get(d.area, len(SPARK_ORDER)))
        return fails[0].error if fails else None
