"""Ingestion with bounded input reliance: the upstream log and the pipeline that reads it."""
