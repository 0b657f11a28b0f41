"""Bounded input reliance: `resumption`, Structured Streaming trials (`streaming`) and
checkpoints (`checkpoint`, with `checkpoint_log`, the reader and laws of a checkpoint's logs)."""
