"""Stream-stream join jobs written as a user would (`--job tests.jobs.joins:NAME`), beside the worked example
(`frontier_harness.streaming_job_example.joined_clicks`): jobs that break a property of the stateful suite, a
strict range, and jobs the suite refuses in one line."""

from __future__ import annotations

from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from frontier_harness.streaming_job_example.joined_clicks import (
    WITHIN,
    CountedClicks,
    JoinedClicks,
    LeftOuterClicks,
)


class AppendWriter(JoinedClicks):
    """The pattern of Spark's docs, `mode("append")`: a batch Spark runs again after a crash between the write
    and its commit appends its joined rows a second time."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(str(self.directory))

    def read(self, spark: SparkSession) -> DataFrame | None:
        return spark.read.parquet(str(self.directory)) if any(self.directory.glob("*.parquet")) else None


def append_writer(directory: str) -> AppendWriter:
    return AppendWriter(directory)


class CountedAppendWriter(CountedClicks):
    """The worked example's count over the join, written with `mode("append")`: a window Spark emits again in
    a batch it runs again after a crash between the write and its commit is appended a second time."""

    write = AppendWriter.write
    read = AppendWriter.read


def counted_append_writer(directory: str) -> CountedAppendWriter:
    return CountedAppendWriter(directory)


class ClicksWatermarkOnly(JoinedClicks):
    """A watermark on the clicks (the right) only: Spark accepts the inner join, and evicts neither side."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        clicks = right.withWatermark("event_time", "5 seconds").alias("click")
        return (
            left.alias("impression")
            .join(clicks, F.expr(WITHIN))
            .select(F.col("impression.data").alias("impression"), F.col("click.data").alias("click"))
        )


def clicks_watermark_only(directory: str) -> ClicksWatermarkOnly:
    return ClicksWatermarkOnly(directory)


class OuterRowsDropped(LeftOuterClicks):
    """A left-outer join whose writer keeps only the rows with a click (a sink whose column is not null):
    the impressions no click joins are never written."""

    def write(self, batch: DataFrame, batch_id: int) -> None:
        super().write(batch.where(F.col("click").isNotNull()), batch_id)


def outer_rows_dropped(directory: str) -> OuterRowsDropped:
    return OuterRowsDropped(directory)


class StrictRange(JoinedClicks):
    """`click < impression < click + 10 s`: on the millisecond grid, `click + 1 ms <= impression <= click +
    9.999 s`."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        impressions = left.withWatermark("event_time", "5 seconds").alias("l")
        clicks = right.withWatermark("event_time", "5 seconds").alias("r")
        strict = "l.key = r.key AND l.event_time > r.event_time AND l.event_time < r.event_time + interval 10 seconds"
        return impressions.join(clicks, F.expr(strict)).select(
            F.col("l.data").alias("ld"), F.col("r.data").alias("rd")
        )


def strict_range(directory: str) -> StrictRange:
    return StrictRange(directory)


class UpdateMode(LeftOuterClicks):
    output_mode: Literal["append", "update"] = "update"


class OneSidedOuter(LeftOuterClicks):
    """A left-outer join with a watermark on the clicks only (Spark accepts it; nothing is ever emitted)."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        clicks = right.withWatermark("event_time", "5 seconds").alias("click")
        return (
            left.alias("impression")
            .join(clicks, F.expr(WITHIN), "leftOuter")
            .select(F.col("impression.data").alias("impression"), F.col("click.data").alias("click"))
        )


class Filtered(JoinedClicks):
    """A filter after the join: the model joins every record."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = super().transform(left, right)
        return joined.where("impression != click")


class OnData(JoinedClicks):
    """A condition on `data` besides the keys and the range."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        impressions = left.withWatermark("event_time", "5 seconds").alias("impression")
        clicks = right.withWatermark("event_time", "5 seconds").alias("click")
        on = F.expr(WITHIN + " AND impression.data < click.data")
        return impressions.join(clicks, on).select(
            F.col("impression.data").alias("impression"), F.col("click.data").alias("click")
        )


class NoData(JoinedClicks):
    """An output without the clicks' `data`: its rows do not name the records they join."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        return super().transform(left, right).drop("click")


class FullOuter(JoinedClicks):
    how = "fullOuter"


class RightOuter(JoinedClicks):
    """Every click, with the impressions that join it or, once the watermark passes it, nulls."""

    how = "rightOuter"


def right_outer(directory: str) -> RightOuter:
    return RightOuter(directory)


def update_mode(directory: str) -> UpdateMode:
    return UpdateMode(directory)


def one_sided_outer(directory: str) -> OneSidedOuter:
    return OneSidedOuter(directory)


def on_data(directory: str) -> OnData:
    return OnData(directory)


def filtered(directory: str) -> Filtered:
    return Filtered(directory)


def no_data(directory: str) -> NoData:
    return NoData(directory)


def full_outer(directory: str) -> FullOuter:
    return FullOuter(directory)


class CountedByClickTime(CountedClicks):
    """The joined clicks counted per key and window of the click's time (the join's right side)."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = JoinedClicks.transform(self, left, right)
        return joined.groupBy("key", F.window("clicked_at", "10 seconds")).agg(F.count("*").alias("clicks"))


def counted_by_click_time(directory: str) -> CountedByClickTime:
    return CountedByClickTime(directory)


class LatestClickPerWindow(CountedClicks):
    """Another aggregate than a count over the join: the suite counts the joined pairs only."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = JoinedClicks.transform(self, left, right)
        return joined.groupBy("key", F.window("shown_at", "10 seconds")).agg(F.max("click").alias("latest"))


def latest_click_per_window(directory: str) -> LatestClickPerWindow:
    return LatestClickPerWindow(directory)


class CountedInUpdateMode(CountedClicks):
    output_mode: Literal["append", "update"] = "update"


def counted_in_update_mode(directory: str) -> CountedInUpdateMode:
    return CountedInUpdateMode(directory)


class CountedPerImpression(CountedClicks):
    """A count grouped by another column than the join's key: the suite counts pairs per key and window."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = JoinedClicks.transform(self, left, right)
        return joined.groupBy("impression", F.window("shown_at", "10 seconds")).agg(
            F.count("*").alias("clicks")
        )


def counted_per_impression(directory: str) -> CountedPerImpression:
    return CountedPerImpression(directory)


class CountedLeftOuter(CountedClicks):
    """The count over the left-outer join: an impression no click joins counts once, when the watermark passes
    it (its outer row)."""

    how = "leftOuter"


def counted_left_outer(directory: str) -> CountedLeftOuter:
    return CountedLeftOuter(directory)


class CountedByShiftedTime(CountedClicks):
    """A window over a time derived from the impression's: its windows are not the records'."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        joined = JoinedClicks.transform(self, left, right)
        shifted = F.col("shown_at") + F.expr("interval 5 seconds")
        return joined.groupBy("key", F.window(shifted, "10 seconds")).agg(F.count("*").alias("clicks"))


def counted_by_shifted_time(directory: str) -> CountedByShiftedTime:
    return CountedByShiftedTime(directory)


class CountedOuterByClickTime(CountedByClickTime):
    """The left-outer join counted by the click's time: its unmatched impressions have none, so the window's
    not-null filter drops them and Spark's optimizer runs the join as an inner one."""

    how = "leftOuter"


def counted_outer_by_click_time(directory: str) -> CountedOuterByClickTime:
    return CountedOuterByClickTime(directory)


class CountedByUnwatermarkedTime(ClicksWatermarkOnly):
    """A count windowing the impressions' time, a side without a watermark: Spark never emits its windows."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        clicks = right.withWatermark("event_time", "5 seconds").alias("click")
        joined = left.alias("impression").join(clicks, F.expr(WITHIN))
        window = F.window("impression.event_time", "10 seconds")
        return joined.groupBy(F.col("impression.key").alias("key"), window).agg(F.count("*").alias("clicks"))


def counted_by_unwatermarked_time(directory: str) -> CountedByUnwatermarkedTime:
    return CountedByUnwatermarkedTime(directory)


class DeduplicatedAfterJoin(JoinedClicks):
    """A deduplication over the join's rows: another stateful operator than a count beside the join."""

    def transform(self, left: DataFrame, right: DataFrame) -> DataFrame:
        return super().transform(left, right).dropDuplicates(["impression", "shown_at"])


def deduplicated_after_join(directory: str) -> DeduplicatedAfterJoin:
    return DeduplicatedAfterJoin(directory)
