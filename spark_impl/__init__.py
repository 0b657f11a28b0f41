"""The frontier-harness pipeline on Apache Spark, DataFrame API only.

Every entry point takes a batch of histories tagged by a `history_id` column
and computes the whole batch in one Spark job. Nothing here calls model/'s
algorithms: it shares only value types (`PartitionedTime`) and computes with
Spark's built-in and higher-order functions, so it runs unchanged on a Spark
Connect session.
"""
