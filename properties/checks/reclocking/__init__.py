"""Reclocking through a remap collection: the `remap`, `reclock`, `restart` and `summary` suites."""
