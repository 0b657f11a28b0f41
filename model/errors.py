"""Every rejection the model makes, as a typed exception naming the offending value.

>>> raise InvalidTime("total", -1, "expected a non-negative integer")
Traceback (most recent call last):
...
model.errors.InvalidTime: invalid total time -1: expected a non-negative integer
"""

from __future__ import annotations


class ModelError(ValueError):
    """Base class: bad input to the specification. Never an infrastructure failure."""


class InvalidTime(ModelError):
    """A value that is not a time of its domain (negative offset, inverted interval...)."""

    def __init__(self, domain: str, value: object, reason: str):
        self.domain, self.value, self.reason = domain, value, reason
        super().__init__(f"invalid {domain} time {value!r}: {reason}")


class UnknownDomain(ModelError):
    """A domain name that `model.domains.parse_domain` does not know."""

    def __init__(self, name: object):
        self.name = name
        super().__init__(f"unknown time domain {name!r}: expected total, partitioned or product(A,B)")


class NotAnAntichain(ModelError):
    """Elements handed over as a frontier that are not mutually incomparable."""

    def __init__(self, elements: object, smaller: object, larger: object):
        self.elements, self.smaller, self.larger = elements, smaller, larger
        super().__init__(
            f"not an antichain: {elements!r} has {smaller!r} <= {larger!r}"
        )


class NegativeMultiplicity(ModelError):
    """A `MutableAntichain` update that would leave a time with a negative count."""

    def __init__(self, time: object, count: int):
        self.time, self.count = time, count
        super().__init__(f"time {time!r} would have count {count} < 0")


class SinceRegression(ModelError):
    """An attempt to move a `since` frontier backwards."""

    def __init__(self, current: object, requested: object):
        self.current, self.requested = current, requested
        super().__init__(f"since may not go back: {requested!r} is not >= current {current!r}")


class UpperRegression(ModelError):
    """An append whose new upper is not at or beyond the current one."""

    def __init__(self, current: object, requested: object):
        self.current, self.requested = current, requested
        super().__init__(f"upper may not go back: {requested!r} is not >= current {current!r}")


class UpdateOutsideAppend(ModelError):
    """An appended update whose time is not in `[upper, new_upper)`."""

    def __init__(self, update: object, lower: object, upper: object):
        self.update, self.lower, self.upper = update, lower, upper
        super().__init__(f"update {update!r} is not in [{lower!r}, {upper!r})")


class ReadNotValid(ModelError):
    """A read at a time that is compacted away (not beyond `since`) or not yet complete."""

    def __init__(self, time: object, since: object, upper: object):
        self.time, self.since, self.upper = time, since, upper
        super().__init__(
            f"cannot read at {time!r}: readable times are beyond since {since!r} and not beyond upper {upper!r}"
        )
