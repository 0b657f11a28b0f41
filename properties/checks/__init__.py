"""The checks, one package per capability (as model/ and spark_impl/ are sorted): each with its
suites, its `strategies/` (what the suites draw) and its `oracles/` (the seeds' rules restated small
and obvious; an oracle never imports the model function it judges). `registry` lists the suites."""
