"""Generators, one module per capability, written against `properties.source.Source`.

Each draws plain data (times, frontiers, lists of actions) and serves both the
Hypothesis shrinking lane (via `properties.source.strategy`) and the fast
seeded screening lane (via `RandomSource`).
"""
