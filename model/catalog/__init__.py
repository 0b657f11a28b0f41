"""The catalog: timelines, view plans, temporal filters and dataflow expiration."""
