"""A TTL store on Spark's own engine: value state with a TTL in `transformWithState`, its clock the batch's."""
