"""A tiny target, implementation and suite for tests/test_mutate.py (pure Python, no Spark).

Imports inside are relative, so the package still works when a test copies it
under another name (the `--since` test commits it to a scratch git repository).
"""
