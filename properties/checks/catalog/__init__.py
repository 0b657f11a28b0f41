"""Timelines, temporal filters and dataflow expiration over a catalog of sources, tables and views:
the `timelines`, `temporal`, `expiration` and `prove` suites; `actions` is the catalog vocabulary."""
