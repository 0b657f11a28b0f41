"""Generators for this capability's suites: plain functions of a `Source` of choices, drawing plain data
(serves the Hypothesis shrinking lane and the seeded screening lane alike)."""
