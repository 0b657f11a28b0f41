"""Changes to a running stateful job, written as a user would: the job running now and the jobs that might
replace it (`upgrade --from tests.jobs.upgrades:counts --to tests.jobs.upgrades:NAME`).

Every job here counts records per key and 10-second window of event time, in update mode under a
5-second watermark, unless its change says otherwise. It reads JSON files from `<its directory>/input`
(`source`, one file a batch) and writes each batch to `<its directory>/out/batch_id=N` (an upsert:
`read` keeps each group's newest row). The jobs for the dynamic half (`*_on_records`) read the harness's
records instead (no `source`): the upgrade suite's trials feed them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from frontier_harness.streaming_job_example.windowed_counts import WindowedCounts

SCHEMA = "key string, event_time timestamp, data string, partition int, offset long"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


class Counts:
    """The job running now: records per key and 10-second window, update mode, a 5-second watermark."""

    output_mode: Literal["append", "update"] = "update"
    conf: dict[str, str] = {}
    group: tuple[str, ...] = ("key", "window")

    def __init__(self, directory: str):
        self.directory = Path(directory)

    def source(self, spark: SparkSession) -> DataFrame:
        folder = self.directory / "input"
        folder.mkdir(parents=True, exist_ok=True)
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))

    def watermarked(self, records: DataFrame) -> DataFrame:
        return records.withWatermark("event_time", "5 seconds")

    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("n"))

    def write(self, batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(self.directory / "out" / f"batch_id={batch_id}"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not any((self.directory / "out").glob("batch_id=*/*.parquet")):
            return None
        rows = spark.read.parquet(str(self.directory / "out"))
        newest = Window.partitionBy(*self.group).orderBy(F.col("batch_id").desc())
        return rows.withColumn("_rank", F.row_number().over(newest)).where("_rank = 1").drop("_rank")


class FilterAdded(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        return super().transform(records.where(F.col("data") != "z"))


class ProjectionReordered(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        return super().transform(records).select("n", "window", "key")


class KeyAdded(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", "data", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("n"))


class KeyRemoved(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        return (
            self.watermarked(records)
            .groupBy(F.window("event_time", "10 seconds"))
            .agg(F.count("*").alias("n"))
        )


class KeyRenamed(Counts):
    group = ("user", "window")

    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records.withColumnRenamed("key", "user"))
        return counted.groupBy("user", F.window("event_time", "10 seconds")).agg(F.count("*").alias("n"))


class KeyedByTwo(Counts):
    """Counts per key, data and window: the job running now for the swap."""

    group = ("key", "data", "window")

    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", "data", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("n"))


class KeysSwapped(KeyedByTwo):
    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("data", "key", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("n"))


class CountToSum(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.window("event_time", "10 seconds"))
        return counted.agg(F.sum("offset").alias("n"))


class CountToAverage(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.window("event_time", "10 seconds"))
        return counted.agg(F.avg("offset").alias("n"))


class AggregateRenamed(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        return super().transform(records).withColumnRenamed("n", "total")


class WindowLonger(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.window("event_time", "20 seconds"))
        return counted.agg(F.count("*").alias("n"))


class WindowSliding(Counts):
    """The same 10-second windows, sliding every 5 seconds: half of its windows are the old job's."""

    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.window("event_time", "10 seconds", "5 seconds"))
        return counted.agg(F.count("*").alias("n"))


class SqlWindow(Counts):
    """The same logic written otherwise: the window as a SQL expression, the columns reordered."""

    def transform(self, records: DataFrame) -> DataFrame:
        counted = self.watermarked(records).groupBy("key", F.expr("window(event_time, '10 seconds')"))
        return counted.agg(F.count(F.lit(1)).alias("n")).select("n", "window", "key")


class DelayLonger(Counts):
    def watermarked(self, records: DataFrame) -> DataFrame:
        return records.withWatermark("event_time", "10 seconds")


class NoWatermark(Counts):
    """The count without a watermark: its state is never evicted and no record is late (the job running now
    for a watermark added, and the new job for one removed)."""

    def watermarked(self, records: DataFrame) -> DataFrame:
        return records


class DelayInMilliseconds(Counts):
    def watermarked(self, records: DataFrame) -> DataFrame:
        return records.withWatermark("event_time", "5000 milliseconds")


class DeduplicationAdded(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        unique = self.watermarked(records).dropDuplicates(["key", "data", "event_time"])
        return unique.groupBy("key", F.window("event_time", "10 seconds")).agg(F.count("*").alias("n"))


class AggregationRemoved(Counts):
    def transform(self, records: DataFrame) -> DataFrame:
        return self.watermarked(records).select("key", "event_time", F.lit(1).alias("n"))


class MorePartitions(Counts):
    conf = {"spark.sql.shuffle.partitions": "3"}


class RocksDB(Counts):
    conf = {"spark.sql.streaming.stateStore.providerClass": ROCKSDB}


class UnrecordedSettings(Counts):
    """Each pinned setting a Spark 3.5 checkpoint lacks (`model.upgrade.output.ABSENT`) set otherwise than
    Spark restores it: a restart shows which value wins."""

    conf = {
        "spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled": "true",
        "spark.sql.dropDuplicates.deterministicKeyOrder.enabled": "true",
        "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion": "2",
        "spark.sql.streaming.stateStore.rowChecksum.enabled": "true",
        "spark.sql.function.protobufExtensions.enabled": "true",
    }


class TwoWatermarks(Counts):
    """Each partition's records under a watermark of their own, counted together: the job running now for
    the watermark policy (the default, min)."""

    def watermarked(self, records: DataFrame) -> DataFrame:
        first = records.where(F.col("partition") == 0).withWatermark("event_time", "5 seconds")
        second = records.where(F.col("partition") == 1).withWatermark("event_time", "5 seconds")
        return first.unionByName(second)


class PolicyMax(TwoWatermarks):
    conf = {"spark.sql.streaming.multipleWatermarkPolicy": "max"}


class PolicyMaxOneWatermark(Counts):
    conf = {"spark.sql.streaming.multipleWatermarkPolicy": "max"}


class SourceAdded(Counts):
    def source(self, spark: SparkSession) -> DataFrame:
        more = self.directory / "more"
        more.mkdir(parents=True, exist_ok=True)
        return super().source(spark).unionByName(spark.readStream.schema(SCHEMA).json(str(more)))


class AppendMode(Counts):
    output_mode = "append"


def _factory(kind: type) -> Any:
    return lambda directory: kind(directory)


counts = _factory(Counts)
filter_added = _factory(FilterAdded)
projection_reordered = _factory(ProjectionReordered)
key_added = _factory(KeyAdded)
key_removed = _factory(KeyRemoved)
key_renamed = _factory(KeyRenamed)
keyed_by_two = _factory(KeyedByTwo)
keys_swapped = _factory(KeysSwapped)
count_to_sum = _factory(CountToSum)
count_to_average = _factory(CountToAverage)
aggregate_renamed = _factory(AggregateRenamed)
window_longer = _factory(WindowLonger)
window_sliding = _factory(WindowSliding)
sql_window = _factory(SqlWindow)
delay_longer = _factory(DelayLonger)
delay_in_milliseconds = _factory(DelayInMilliseconds)
no_watermark = _factory(NoWatermark)
deduplication_added = _factory(DeduplicationAdded)
aggregation_removed = _factory(AggregationRemoved)
more_partitions = _factory(MorePartitions)
unrecorded_settings = _factory(UnrecordedSettings)
rocksdb = _factory(RocksDB)
two_watermarks = _factory(TwoWatermarks)
policy_max = _factory(PolicyMax)
policy_max_one_watermark = _factory(PolicyMaxOneWatermark)
source_added = _factory(SourceAdded)
append_mode = _factory(AppendMode)


# The dynamic half's jobs: changes over the harness's records, written and read as the example's (its
# count -> sum and its refactor are `streaming_job_example/windowed_counts_changed.py`).


class KeyedByTwoOnRecords(WindowedCounts):
    """Counts per key, data and window: the job running now for the swap over the harness's records."""

    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        counted = watermarked.groupBy("key", "data", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("count"))

    def read(self, spark: SparkSession) -> DataFrame | None:
        if not any(self.directory.glob("batch_id=*/*.parquet")):
            return None
        rows = spark.read.parquet(str(self.directory))
        newest = Window.partitionBy("key", "data", "window").orderBy(F.col("batch_id").desc())
        return rows.withColumn("_rank", F.row_number().over(newest)).where("_rank = 1").drop("_rank")


class KeysSwappedOnRecords(KeyedByTwoOnRecords):
    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        counted = watermarked.groupBy("data", "key", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("count"))


class KeysMergedOnRecords(WindowedCounts):
    """Counts key `a`'s records under `b` from now on: the new key's value `b` meets the old job's state of
    `b`, which it continues; `a`'s old groups meet no new value (orphaned, never updated)."""

    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        key = F.when(F.col("key") == "a", "b").otherwise(F.col("key")).alias("key")
        counted = watermarked.groupBy(key, F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("count"))


class KeyAddedOnRecords(WindowedCounts):
    def transform(self, records: DataFrame) -> DataFrame:
        watermarked = records.withWatermark("event_time", "5 seconds")
        counted = watermarked.groupBy("key", "data", F.window("event_time", "10 seconds"))
        return counted.agg(F.count("*").alias("count"))


keyed_by_two_on_records = _factory(KeyedByTwoOnRecords)
keys_swapped_on_records = _factory(KeysSwappedOnRecords)
keys_merged_on_records = _factory(KeysMergedOnRecords)
key_added_on_records = _factory(KeyAddedOnRecords)
