"""The rules of what Spark pins and of what it writes out: the settings of `offsets/N`, the output mode, the
output columns and the filters after the stateful operators.

- A setting Spark pins in `offsets/N` (`OffsetSeqMetadata.relevantSQLConfs`: shuffle partitions, the
  state store provider, the watermark policy, the state format versions...) is restored from the
  checkpoint on a restart, the session's value overridden (a WARN in Spark's log): the new value is not
  applied. The results are the old job's, safe, unless the setting decides them: the watermark policy
  of a job with several watermarks (`min` holds the watermark to the slowest input, `max` moves it with
  the fastest), where the records judged late are the old policy's.
- The output mode is not recorded: switching it restarts, and changes which rows the groups in state at
  the switch get (update writes each change, append each window once, when the watermark passes it).
- The output columns and the filters after the operators are not recorded either: the rows written before
  the switch keep the old computation, a group not updated after it keeps its old row. A column renamed
  (the same computation) or moved only renames or reorders what is written: safe.

>>> [d.verdict.value for d in setting_differences({"spark.sql.shuffle.partitions": "1"}, {"spark.sql.shuffle.partitions": "4"}, 1)]
['safe']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from frontier_harness.model.upgrade.difference import GUIDE, NOT_RECORDED, PINNED, POLICY, Difference
from frontier_harness.model.vocabulary.event_time import FieldKey, OutputMode
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

POLICY_SETTING = "spark.sql.streaming.multipleWatermarkPolicy"
NULLABLE_SETTING = "spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled"
# What a restart on PySpark 4.3 sets for each pinned setting a checkpoint written by an older Spark lacks
# (`OffsetSeqMetadata.relevantSQLConfDefaultValues`), whatever the job sets, read from the offsets it then
# writes: measured on a checkpoint Spark 3.5 wrote, the job setting each otherwise (`tests/test_upgrade_matrix.py`).
# Three differ from the session's defaults. The last two only at the session's value: a job cannot set them
# otherwise here (avro state is refused for an aggregation; source evolution wants named sources).
ABSENT: dict[str, str] = {
    NULLABLE_SETTING: "false",  # the session's: true
    "spark.sql.dropDuplicates.deterministicKeyOrder.enabled": "false",  # the session's: true
    "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion": "1",  # the session's: 2
    "spark.sql.streaming.stateStore.rowChecksum.enabled": "false",
    "spark.sql.function.protobufExtensions.enabled": "false",
    "spark.sql.streaming.stateStore.encodingFormat": "unsaferow",
    "spark.sql.streaming.queryEvolution.enableSourceEvolution": "false",
}
MODES: dict[tuple[str, str], str] = {
    (OutputMode.UPDATE, OutputMode.APPEND): (
        "the old job wrote them as they changed; the new one writes each again, once, when the watermark passes it"
    ),
    (OutputMode.APPEND, OutputMode.UPDATE): (
        "the old job withheld them until complete; the new one writes only those a record updates after the switch"
    ),
}


def restored(conf: Mapping[str, Any]) -> dict[str, Any]:
    """The pinned settings a restart on a checkpoint runs with: those it recorded, and for each one an older
    Spark did not record, the value Spark sets for it (`ABSENT`).

    >>> restored({"spark.sql.shuffle.partitions": "1"})[NULLABLE_SETTING]
    'false'
    >>> restored({NULLABLE_SETTING: "true"})[NULLABLE_SETTING]
    'true'
    """
    return {**ABSENT, **conf}


def setting_differences(old: Mapping[str, Any], new: Mapping[str, Any], watermarks: int) -> list[Difference]:
    """Each pinned setting whose new value differs from the checkpoint's (`restored`): not applied
    (`watermarks`: how many the new job has).

    >>> [d.what for d in setting_differences({}, {NULLABLE_SETTING: "true"}, 1)]
    ['spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled: false -> true (not applied: the checkpoint did not record it, and Spark restarts it with false)']
    """
    pinned = restored(old)
    found = []
    for key in sorted(set(pinned) & set(new)):
        before, after = pinned[key], new[key]
        if before is None or after is None or str(before) == str(after):
            continue
        decides = key == POLICY_SETTING and watermarks > 1
        kept = (
            f"the checkpoint's {before} stays in force"
            if key in old
            else f"the checkpoint did not record it, and Spark restarts it with {before}"
        )
        found.append(
            Difference(
                Area.SETTING,
                f"{key}: {before} -> {after} (not applied: {kept})",
                Verdict.RESULTS_CHANGE if decides else Verdict.SAFE,
                "a restart restores the settings Spark pins in offsets/N over the session's",
                POLICY if key == POLICY_SETTING else PINNED,
                rows=(
                    f"the records judged late: the watermark of the job's {watermarks} watermarks is still their "
                    f"{before}, not their {after}"
                    if decides
                    else None
                ),
            )
        )
    return found


def mode_differences(old: str | None, new: str | None, held: str) -> list[Difference]:
    """Another output mode: the groups in state at the switch get the rows of neither mode alone."""
    if old is None or new is None or old == new:
        return []
    how = MODES.get((old, new), "the two modes write the groups in state at the switch differently")
    return [
        Difference(
            Area.OUTPUT_MODE,
            f"{old} -> {new}",
            Verdict.RESULTS_CHANGE,
            "the output mode is not recorded; it decides which rows each group gets",
            NOT_RECORDED,
            rows=f"{held}: {how}",
        )
    ]


def output_differences(
    old: Sequence[Mapping[str, Any]] | None,
    new: Sequence[Mapping[str, Any]] | None,
    old_filters: Sequence[str] | None,
    new_filters: Sequence[str] | None,
) -> list[Difference]:
    """Output columns computed otherwise, added or dropped, and other filters after the operators; columns
    only renamed."""
    if old is None or new is None:
        return []
    before = {f[FieldKey.LINEAGE]: f[FieldKey.NAME] for f in old}
    after = {f[FieldKey.LINEAGE]: f[FieldKey.NAME] for f in new}
    found = []
    added = [after[lineage] for lineage in after if lineage not in before]
    dropped = [before[lineage] for lineage in before if lineage not in after]
    if added or dropped:
        what = ", ".join(
            [f"{n} computed otherwise or added" for n in added] + [f"{n} dropped" for n in dropped]
        )
        found.append(_rewritten(f"columns: {what}"))
    renamed = [(before[lin], after[lin]) for lin in before if lin in after and before[lin] != after[lin]]
    if renamed:
        found.append(
            Difference(
                Area.OUTPUT,
                "columns renamed: " + ", ".join(f"{b} -> {a}" for b, a in renamed),
                Verdict.SAFE,
                "the same values, under new names: rows written before the switch keep the old names",
                GUIDE,
            )
        )
    if old_filters is not None and new_filters is not None and sorted(old_filters) != sorted(new_filters):
        found.append(
            _rewritten(
                f"filters after the operators [{'; '.join(old_filters)}] -> [{'; '.join(new_filters)}]"
            )
        )
    return found


def _rewritten(what: str) -> Difference:
    return Difference(
        Area.OUTPUT,
        what,
        Verdict.RESULTS_CHANGE,
        "what is written after the stateful operators is not recorded: only rows written from the switch on follow the new job",
        GUIDE,
        rows="the rows written before the switch: a group not updated after it keeps the old job's row",
    )
