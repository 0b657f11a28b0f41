"""The Structured Streaming suites: crash trials of a query or a user's job, and checkpoint logs."""
