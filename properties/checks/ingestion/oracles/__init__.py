"""The ingestion suites' oracles: their rules restated apart from the code they judge."""
