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


class ClockRegression(ModelError):
    """A clock reading below an earlier one (TTL store): never accepted."""

    def __init__(self, previous: int, reading: int):
        self.previous, self.reading = previous, reading
        super().__init__(f"clock went back: reading {reading} is below the previous reading {previous}")


class InvalidTtl(ModelError):
    """A TTL or absolute expire-at the TTL store rejects (zero, negative, in the past...)."""

    def __init__(self, ttl: object, reason: str):
        self.ttl, self.reason = ttl, reason
        super().__init__(f"invalid ttl {ttl!r}: {reason}")


class InvalidRow(ModelError):
    """A TTL-store row the format cannot hold (key too long, value too long, not bytes...)."""

    def __init__(self, field: str, value: object, reason: str):
        self.field, self.value, self.reason = field, value, reason
        shown = f"{len(value)} bytes" if isinstance(value, (bytes, bytearray)) else repr(value)
        super().__init__(f"invalid row {field} ({shown}): {reason}")


class CorruptSst(ModelError):
    """An SST that cannot be decoded: truncated, checksum mismatch, bad field."""

    def __init__(self, sst: str, offset: int, reason: str):
        self.sst, self.offset, self.reason = sst, offset, reason
        super().__init__(f"corrupt SST {sst!r} at byte {offset}: {reason}")


class BadCompaction(ModelError):
    """A TTL-store compaction whose chosen sources are not a valid span of the LSM."""

    def __init__(self, selection: object, reason: str):
        self.selection, self.reason = selection, reason
        super().__init__(f"cannot compact {selection!r}: {reason}")


class InvalidRemap(ModelError):
    """A remap built from bindings that break its laws; `violations` lists every one."""

    def __init__(self, violations: list):
        self.violations = list(violations)
        shown = "; ".join(str(v) for v in self.violations)
        super().__init__(f"invalid remap ({len(self.violations)} violations): {shown}")


class SourceUpperRegression(ModelError):
    """Minting with a source upper that is not at or beyond the remap's latest binding."""

    def __init__(self, current: object, requested: object):
        self.current, self.requested = current, requested
        super().__init__(f"source upper may not go back: {requested!r} is not >= current {current!r}")


class SinceBeyondUpper(ModelError):
    """A remap compaction whose `since` would leave no readable IntoTime before `upper`."""

    def __init__(self, since: object, upper: object):
        self.since, self.upper = since, upper
        super().__init__(f"since {since!r} must be a time strictly before the remap's upper {upper!r}")


class InversionBeyondUpper(ModelError):
    """`source_upper_at` asked about an IntoTime frontier beyond the remap's upper."""

    def __init__(self, frontier: object, upper: object):
        self.frontier, self.upper = frontier, upper
        super().__init__(f"cannot invert the remap at {frontier!r}: it is beyond the remap's upper {upper!r}")


class InvalidTransactionInput(ModelError):
    """Transactional input that no complete transaction can explain (duplicate metadata, overfull)."""

    def __init__(self, txn: object, reason: str):
        self.txn, self.reason = txn, reason
        super().__init__(f"invalid transaction {txn!r}: {reason}")


class PartiallyClosedUpper(ModelError):
    """Two input uppers where exactly one is closed: a Product frontier cannot express that."""

    def __init__(self, data_upper: object, txn_upper: object):
        self.data_upper, self.txn_upper = data_upper, txn_upper
        super().__init__(
            f"cannot combine data upper {data_upper!r} with metadata upper {txn_upper!r}: only one is closed"
        )


class NoSummaryAt(ModelError):
    """A summary asked for at an IntoTime before the first summarized time."""

    def __init__(self, time: object, first: object):
        self.time, self.first = time, first
        super().__init__(f"no summary at {time!r}: the first summarized IntoTime is {first!r}")
