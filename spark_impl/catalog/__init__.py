"""The catalog on Spark: view plans and dataflow expiration."""
