"""Stateful jobs the stateful suite refuses, each in one line with exit 2 (`--job tests.jobs.refused:NAME`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupStateTimeout

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


class ArbitraryState(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key").applyInPandasWithState(
            _running_count, "key string, count long", "count long", "update", GroupStateTimeout.NoTimeout
        )


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


class TransformWithState(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        return records.groupBy("key").transformWithStateInPandas(
            RunningCount(), "key string, count long", "Update", "None"
        )


class Chained(_Refused):
    def transform(self, records: DataFrame) -> DataFrame:
        counts = records.withWatermark("event_time", "5 seconds").groupBy(
            F.window("event_time", "10 seconds"), "key"
        )
        return counts.count().groupBy("window").count()


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


def arbitrary_state(directory: str) -> ArbitraryState:
    return ArbitraryState(directory)


def transform_with_state(directory: str) -> TransformWithState:
    return TransformWithState(directory)


def chained(directory: str) -> Chained:
    return Chained(directory)


def stream_stream_join(directory: str) -> StreamStreamJoin:
    return StreamStreamJoin(directory)


def no_watermark_append(directory: str) -> NoWatermarkAppend:
    return NoWatermarkAppend(directory)


def no_window_append(directory: str) -> NoWindowAppend:
    return NoWindowAppend(directory)


def row_wise(directory: str) -> RowWise:
    return RowWise(directory)
