"""Stateful jobs the stateful suite refuses, each in one line with exit 2 (`--job tests.jobs.refused:NAME`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from frontier_harness.streaming_job_example.windowed_counts import WindowedCounts


class _Refused(WindowedCounts):
    output_mode: Literal["append", "update"] = "update"


class CompleteMode(_Refused):
    output_mode = "complete"  # type: ignore[assignment]  # planted: a mode the suite refuses


class SessionWindows(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        return watermarked.groupBy("key", F.session_window("event_time", "5 seconds")).count()


def _running_count(key: Any, frames: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
    total = (state.get[0] if state.exists else 0) + sum(len(f) for f in frames)
    state.update((total,))
    yield pd.DataFrame({"key": [key[0]], "count": [total]})


class RunningCount(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.count = handle.getValueState("count", "count long")

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
    ) -> Iterator[pd.DataFrame]:
        total = (self.count.get()[0] if self.count.exists() else 0) + sum(len(f) for f in rows)
        self.count.update((total,))
        yield pd.DataFrame({"key": [key[0]], "count": [total]})

    def close(self) -> None:
        pass


class TwoProcessors(_Refused):
    """A processor over another: the suite reads one processor's plan."""

    def transform(self, records: DataFrame) -> DataFrame:
        counts = records.groupBy("key").transformWithStateInPandas(
            RunningCount(), "key string, count long", "Update", "None"
        )
        return counts.groupBy("key").transformWithStateInPandas(
            RunningCount(), "key string, count long", "Update", "None"
        )


class Chained(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        counts = records.withWatermark("event_time", "5 seconds").groupBy(
            F.window("event_time", "10 seconds"), "key"
        )
        return counts.count().groupBy("window").count()


class RolledUpInUpdateMode(_Refused):
    """A roll-up in update mode: a chain of aggregations runs in append mode only."""

    def transform(self, records: DataFrame) -> DataFrame:
        inner = records.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds")
        )
        return inner.count().groupBy("key", F.window(F.window_time("window"), "30 seconds")).count()


class RolledUpFromSliding(_Refused):
    """A roll-up over sliding windows: a record is kept for one of its inner windows and late for another."""

    output_mode = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        inner = records.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds", "5 seconds")
        )
        return inner.count().groupBy("key", F.window(F.window_time("window"), "30 seconds")).count()


class RolledUpByStart(_Refused):
    """A roll-up keyed on the inner window's start: Spark carries an emitted window at its end."""

    output_mode = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        inner = records.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds")
        )
        return inner.count().groupBy("key", F.window("window.start", "30 seconds")).count()


class WindowOverDerivedTime(_Refused):
    """A window over the event time shifted after the watermark: Spark's windows and lateness are not the
    records' (the shifted column carries no watermark)."""

    def transform(self, records: DataFrame) -> DataFrame:
        shifted = records.withWatermark("event_time", "5 seconds").withColumn(
            "event_time", F.col("event_time") + F.expr("INTERVAL 10 seconds")
        )
        return shifted.groupBy("key", F.window("event_time", "10 seconds")).count()


class StreamStreamJoin(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        left = records.withWatermark("event_time", "5 seconds").select("key", "event_time", "data")
        right = records.withWatermark("event_time", "5 seconds").select(
            F.col("key").alias("other"), F.col("event_time").alias("seen")
        )
        return left.join(right, (left.key == right.other) & (right.seen <= left.event_time))


class NoWatermarkAppend(_Refused):
    output_mode = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key", F.window("event_time", "10 seconds")).count()


class NoWindowAppend(_Refused):
    output_mode = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        return records.withWatermark("event_time", "5 seconds").groupBy("key").count()


class RowWise(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.where(F.col("key") == "a")


def complete_mode(directory: str) -> CompleteMode:
    return CompleteMode(directory)


def session_windows(directory: str) -> SessionWindows:
    return SessionWindows(directory)


def two_processors(directory: str) -> TwoProcessors:
    return TwoProcessors(directory)


def chained(directory: str) -> Chained:
    return Chained(directory)


def rolled_up_in_update_mode(directory: str) -> RolledUpInUpdateMode:
    return RolledUpInUpdateMode(directory)


def rolled_up_from_sliding(directory: str) -> RolledUpFromSliding:
    return RolledUpFromSliding(directory)


def rolled_up_by_start(directory: str) -> RolledUpByStart:
    return RolledUpByStart(directory)


def window_over_derived_time(directory: str) -> WindowOverDerivedTime:
    return WindowOverDerivedTime(directory)


def stream_stream_join(directory: str) -> StreamStreamJoin:
    return StreamStreamJoin(directory)


def no_watermark_append(directory: str) -> NoWatermarkAppend:
    return NoWatermarkAppend(directory)


def no_window_append(directory: str) -> NoWindowAppend:
    return NoWindowAppend(directory)


def row_wise(directory: str) -> RowWise:
    return RowWise(directory)


# What the suite cannot model, each refused in one line by `stateful_plan` (`tests/test_stateful_plan.py`).


class WatermarkOnAnotherColumn(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        shifted = records.withColumn("seen", F.col("event_time") + F.expr("INTERVAL 1 SECOND"))
        counts = shifted.withWatermark("seen", "5 seconds").groupBy("key", F.window("seen", "10 seconds"))
        return counts.count()


class WatermarkOverSample(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        kept = records.sample(0.5, seed=1).withWatermark("event_time", "5 seconds")
        return kept.groupBy("key", F.window("event_time", "10 seconds")).count()


class DeduplicatedOnDerived(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        minute = records.withWatermark("event_time", "5 seconds").withColumn(
            "m", F.date_trunc("minute", "event_time")
        )
        return minute.dropDuplicates(["key", "m"])


class DeduplicatedOnDerivedWithoutData(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        ids = records.select(F.concat_ws(":", "key", "data").alias("id"), "event_time")
        return ids.withWatermark("event_time", "5 seconds").dropDuplicatesWithinWatermark(["id"])


class FilterBetweenOperators(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        unique = records.withWatermark("event_time", "5 seconds").dropDuplicatesWithinWatermark(["data"])
        kept = unique.where(F.col("key") != "c")
        return kept.groupBy("key", F.window("event_time", "10 seconds")).count()


class FilterDroppingData(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        kept = records.select("key", "event_time").where(F.col("key") != "c")
        counts = kept.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds")
        )
        return counts.count()


class GroupedByRawEventTime(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.withWatermark("event_time", "5 seconds").groupBy("key", "event_time").count()


class WindowDropped(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        counts = records.withWatermark("event_time", "5 seconds").groupBy(
            "key", F.window("event_time", "10 seconds")
        )
        return counts.count().select("key", "count")


class TransformRaises(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("no_such_column").count()


class LatenessNotAnInterval(_Refused):
    lateness = "a little"


class Limited(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.limit(3)


def watermark_on_another_column(directory: str) -> WatermarkOnAnotherColumn:
    return WatermarkOnAnotherColumn(directory)


class WatermarkOverWatermark(_Refused):
    """A helper's watermark, then the job's own: two `withWatermark` on the records, stacked."""

    def transform(self, records: DataFrame) -> DataFrame:
        marked = records.withWatermark("event_time", "10 seconds").withWatermark("event_time", "2 seconds")
        return marked.groupBy("key", F.window("event_time", "10 seconds")).count()


def watermark_over_watermark(directory: str) -> WatermarkOverWatermark:
    return WatermarkOverWatermark(directory)


def watermark_over_sample(directory: str) -> WatermarkOverSample:
    return WatermarkOverSample(directory)


def deduplicated_on_derived(directory: str) -> DeduplicatedOnDerived:
    return DeduplicatedOnDerived(directory)


def deduplicated_on_derived_without_data(directory: str) -> DeduplicatedOnDerivedWithoutData:
    return DeduplicatedOnDerivedWithoutData(directory)


def filter_between_operators(directory: str) -> FilterBetweenOperators:
    return FilterBetweenOperators(directory)


def filter_dropping_data(directory: str) -> FilterDroppingData:
    return FilterDroppingData(directory)


def grouped_by_raw_event_time(directory: str) -> GroupedByRawEventTime:
    return GroupedByRawEventTime(directory)


def window_dropped(directory: str) -> WindowDropped:
    return WindowDropped(directory)


def transform_raises(directory: str) -> TransformRaises:
    return TransformRaises(directory)


def lateness_not_an_interval(directory: str) -> LatenessNotAnInterval:
    return LatenessNotAnInterval(directory)


def limited(directory: str) -> Limited:
    return Limited(directory)


class CountOverDeduplication(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        kept = records.withWatermark("event_time", "5 seconds").dropDuplicatesWithinWatermark(["data"])
        return kept.groupBy("key").count()


def count_over_deduplication(directory: str) -> CountOverDeduplication:
    return CountOverDeduplication(directory)


class SessionDropped(_Refused):
    output_mode = "append"

    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        return (
            watermarked.groupBy("key", F.session_window("event_time", "5 seconds"))
            .count()
            .drop("session_window")
        )


def session_dropped(directory: str) -> SessionDropped:
    return SessionDropped(directory)
