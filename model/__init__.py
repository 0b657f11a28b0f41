"""The executable specification of time in incremental dataflow.

Pure Python and attrs; imports neither Spark, z3 nor Hypothesis. Every public
function states its invariant and shows a runnable example (the examples run as
doctests in the test suite).
"""
