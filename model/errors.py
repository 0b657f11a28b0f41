"""Every rejection the model makes, as a typed exception naming the offending value.

>>> raise InvalidTime("total", -1, "expected a non-negative integer")
Traceback (most recent call last):
...
frontier_harness.model.errors.InvalidTime: invalid total time -1: expected a non-negative integer
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
    """A domain name that `frontier_harness.model.time.domains.parse_domain` does not know."""

    def __init__(self, name: object):
        self.name = name
        super().__init__(f"unknown time domain {name!r}: expected total, partitioned or product(A,B)")


class NotAnAntichain(ModelError):
    """Elements handed over as a frontier that are not mutually incomparable."""

    def __init__(self, elements: object, smaller: object, larger: object):
        self.elements, self.smaller, self.larger = elements, smaller, larger
        super().__init__(f"not an antichain: {elements!r} has {smaller!r} <= {larger!r}")


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


class TimelineError(ModelError):
    """A dataflow (view, MV, index, subscribe, select) whose inputs span several timelines."""

    def __init__(self, owner: str, timelines: dict):
        self.owner, self.timelines = owner, dict(timelines)
        named = ", ".join(f"{n!r} ({t!r})" for n, t in sorted(self.timelines.items()))
        super().__init__(
            f"multiple timelines within one dataflow are not supported: {owner!r} depends on {named}"
        )


class InvalidSourceOption(ModelError):
    """A source kind or `WITH` option combination that the catalog rejects."""

    def __init__(self, kind: object, option: object, reason: str):
        self.kind, self.option, self.reason = kind, option, reason
        super().__init__(f"invalid source option {option!r} for kind {kind!r}: {reason}")


class UnknownObject(ModelError):
    """A catalog lookup or dependency on a name that does not exist."""

    def __init__(self, name: object, known: object):
        self.name, self.known = name, known
        super().__init__(f"unknown catalog object {name!r}; known: {known!r}")


class DuplicateObject(ModelError):
    """Creating a catalog object under a name that is taken."""

    def __init__(self, name: object):
        self.name = name
        super().__init__(f"catalog object {name!r} already exists")


class InvalidDependency(ModelError):
    """An object reading from one it may not read (an index, subscribe or select)."""

    def __init__(self, owner: object, dependency: object, kind: str):
        self.owner, self.dependency, self.kind = owner, dependency, kind
        super().__init__(f"{owner!r} cannot read from {dependency!r}: {kind} objects are not readable inputs")


class InvalidRefresh(ModelError):
    """A refresh clause with a non-positive interval or a negative time."""

    def __init__(self, clause: object, reason: str):
        self.clause, self.reason = clause, reason
        super().__init__(f"invalid refresh clause {clause!r}: {reason}")


class InvalidPlan(ModelError):
    """A plan node with an unknown operator, bad column or empty operand list."""

    def __init__(self, node: object, reason: str):
        self.node, self.reason = node, reason
        super().__init__(f"invalid plan node {node!r}: {reason}")


class ColumnOutOfRange(ModelError):
    """A plan reading a column that a row does not have."""

    def __init__(self, column: int, row: object):
        self.column, self.row = column, row
        super().__init__(f"column {column} out of range for row {row!r}")


class InvalidReplica(ModelError):
    """A replica with a negative expiration offset or non-increasing start times."""

    def __init__(self, field: str, value: object, reason: str):
        self.field, self.value, self.reason = field, value, reason
        super().__init__(f"invalid replica {field} {value!r}: {reason}")


class InvalidSkew(ModelError):
    """A skew schedule that is not on a wall-clock leaf, or whose wall-clock times do not increase."""

    def __init__(self, name: object, points: object, reason: str):
        self.name, self.points, self.reason = name, points, reason
        super().__init__(f"invalid skew {points!r} for {name!r}: {reason}")


class ReplicaNotRunning(ModelError):
    """A read at a wall-clock time before the replica's first start."""

    def __init__(self, wall: object, first_start: object):
        self.wall, self.first_start = wall, first_start
        super().__init__(f"no replica runs at wall-clock time {wall!r}: it first starts at {first_start!r}")


class ReplicaExpired(ModelError):
    """Wall-clock time passed the replica's expiration: it must be restarted."""

    def __init__(self, wall: object, start: object, expiration: object):
        self.wall, self.start, self.expiration = wall, start, expiration
        super().__init__(
            f"replica started at {start!r} expired at {expiration!r}; wall-clock time is {wall!r}"
        )


class DataflowExpired(ModelError):
    """A read at or beyond a dataflow's expiration, or of a dataflow whose frontier reached it."""

    def __init__(self, name: object, time: object, expiration: object, upper: object):
        self.name, self.time, self.expiration, self.upper = name, time, expiration, upper
        super().__init__(
            f"dataflow {name!r} expires at {expiration!r} (its upper is {upper!r}): cannot serve a read at {time!r}"
        )


class CompactedRead(ModelError):
    """A read of an upstream log from a frontier that needs records the upstream has compacted away."""

    def __init__(self, frontier: object, partition: int, needed: int, start: int):
        self.frontier, self.partition, self.needed, self.start = frontier, partition, needed, start
        super().__init__(
            f"cannot read from {frontier!r}: partition {partition} needs offset {needed} "
            f"but the upstream compacted everything before offset {start}"
        )


class UnknownPartition(ModelError):
    """A record produced to a partition the log does not have (partitions are dense; an LSN log has one)."""

    def __init__(self, partition: object, known: int):
        self.partition, self.known = partition, known
        has = f"partitions 0..{known - 1}" if known else "no partition yet"
        super().__init__(f"unknown partition {partition!r}: the log has {has} and may add {known}")


class UnknownFault(ModelError):
    """A fault point name the ingestion pipeline does not have, or one used on the wrong action."""

    def __init__(self, fault: object, allowed: object):
        self.fault, self.allowed = fault, allowed
        super().__init__(f"unknown fault point {fault!r}: expected one of {allowed!r}")


class InvalidOperatorDag(ModelError):
    """A DAG of stateful operators Spark refuses, or one the model cannot state (a node of the wrong shape)."""

    def __init__(self, node: object, reason: str):
        self.node, self.reason = node, reason
        super().__init__(f"invalid operator DAG at {node!r}: {reason}")


class UndecidedChoice(ModelError):
    """An operator's output handed on to the next one where Spark's choice among candidates decides it."""

    def __init__(self, group: object, candidates: object):
        self.group, self.candidates = group, candidates
        super().__init__(
            f"group {group!r} passes on one of {candidates!r}, which differ: "
            "the next operator's input depends on Spark's choice"
        )


class InvalidWrite(ModelError):
    """A CDC write the source table cannot take: an insert of a key it holds, an update or delete of one it
    does not (`frontier_harness.model.cdc.replication`); names the transaction, the write and the key."""

    def __init__(self, transaction: object, write: object, key: object, reason: str):
        self.transaction, self.write, self.key = transaction, write, key
        super().__init__(f"transaction {transaction}: {write!r} at key {key}: {reason}")


class InvalidCdcStep(ModelError):
    """A step of a CDC history its sessions cannot take (a write or commit with no transaction open, a
    second begin, a key another open transaction holds, a PostgreSQL restart under an open transaction);
    names the step and why."""

    def __init__(self, step: int, action: object, reason: str):
        self.step, self.action = step, action
        super().__init__(f"step {step} ({action}): {reason}")


class CannotJudge(ModelError):
    """A change to a running job the upgrade model has no rule for, or inputs that do not describe one job:
    named, with why (exit 2, never a verdict)."""

    def __init__(self, what: str, why: str):
        self.what, self.why = what, why
        super().__init__(f"cannot judge {what}: {why}")
