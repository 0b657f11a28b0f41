"""Reclocking on Spark: the remap, the as-of join, reclocked collections and summaries."""
