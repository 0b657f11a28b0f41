"""Reclocking: the remap collection, reclocked collections, and practical summaries."""
