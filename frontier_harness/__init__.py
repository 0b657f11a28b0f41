"""frontier-harness: the specification (model), the Spark pipeline (spark_impl), the harness (properties)
and a worked example of a user implementation (pandas_impl), under one distribution namespace."""
