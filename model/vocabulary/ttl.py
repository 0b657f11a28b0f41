"""Words of the ttl capability's suites: the TTL store, its compaction filter, its SST codec.

A *ttl* history (`StoreAction`) opens a store (`open(default_ttl?, interval?)`),
writes it (`put(key, value, ttl?, expire_at?)`, `delete(key)`), moves the user
clock (`tick(ms)`, `set_clock(ms)`), flushes and compacts it (`flush`,
`compact(start, length)`, `periodic`) and crashes it (`crash(ms?)`). After every
step it is observed (`StoreLabel`): each of `STORE_KEYS`'s `get`, the `scan`, the
step's typed `error`, and the two audits of what its SSTs keep.

A *ttl_compaction* history is `row(run, key, value?, seq, create, expire)`s then
`compact(now, last)`s, each observed as its `output` rows. A *ttl_codec* history is
`row(key, value?, seq, create?, expire)`s (hex), one `encode(version, created)`, then
`corrupt(offset, xor)` and `truncate(length)`s; it is observed as the `encoded`
bytes and what each copy `decoded` to (a `META` tuple and the numbered rows).

>>> StoreAction("set_clock") is StoreAction.SET_CLOCK
True
>>> {"expire_at": 5}[StoreArg.EXPIRE_AT], StoreLabel.KEPT
(5, 'expired value kept by compaction')
>>> sorted(CodecAction)
['corrupt', 'encode', 'row', 'truncate']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from frontier_harness.model.vocabulary import Decoder, HistoryLike, MalformedHistory, Word, decoded

# The keys a ttl history writes; every step observes the `get` of each.
STORE_KEYS: tuple[str, ...] = ("a", "b", "c")


class StoreAction(Word):
    """A step of a ttl history; `open` only first (optional: without it, the default options)."""

    OPEN = "open"
    PUT = "put"
    DELETE = "delete"
    TICK = "tick"
    SET_CLOCK = "set_clock"
    FLUSH = "flush"
    COMPACT = "compact"
    PERIODIC = "periodic"
    CRASH = "crash"


class StoreArg(Word):
    """Argument keys of a ttl history's actions: `open`'s options, a write's key, value and expiry,
    a clock move's `ms`, and the span a `compact` names."""

    DEFAULT_TTL = "default_ttl"
    INTERVAL = "interval"
    KEY = "key"
    VALUE = "value"
    TTL = "ttl"
    EXPIRE_AT = "expire_at"
    MS = "ms"
    START = "start"
    LENGTH = "length"


@attrs.frozen
class StoreStep:
    """One action of a ttl history after its leading `open`, decoded: what it writes (`key`, `value` as
    bytes, a `ttl` or an `expire_at`), the clock it sets or moves (`ms`), the span a `compact` names
    (`start`, `length`). Absent arguments are None (a put with neither `ttl` nor `expire_at` takes the
    store's default).

    >>> StoreStep.of(3, {"ms": 5}, StoreAction.TICK).clock_after(10)
    15
    """

    step: int
    action: StoreAction
    key: bytes | None = None
    value: bytes | None = None
    ttl: int | None = None
    expire_at: int | None = None
    ms: int | None = None
    start: int = 0
    length: int = 0

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any], action: StoreAction) -> StoreStep:
        """The step of `action` with `args`; a `KeyError` names an argument the action needs."""
        needed = {
            StoreAction.PUT: (StoreArg.KEY, StoreArg.VALUE),
            StoreAction.DELETE: (StoreArg.KEY,),
            StoreAction.TICK: (StoreArg.MS,),
            StoreAction.SET_CLOCK: (StoreArg.MS,),
            StoreAction.COMPACT: (StoreArg.START, StoreArg.LENGTH),
        }.get(action, ())
        missing = next((arg for arg in needed if arg not in args), None)
        if missing is not None:
            raise KeyError(missing)
        key, value = args.get(StoreArg.KEY), args.get(StoreArg.VALUE)
        return cls(
            step,
            action,
            None if key is None else key.encode(),
            None if value is None else value.encode(),
            args.get(StoreArg.TTL),
            args.get(StoreArg.EXPIRE_AT),
            args.get(StoreArg.MS),
            args.get(StoreArg.START, 0),
            args.get(StoreArg.LENGTH, 0),
        )

    def clock_after(self, ms: int) -> int:
        """The user clock after this step, from `ms` before it: `tick` and `set_clock` move it, and so does
        `crash(ms)` while the store is down (the store sees it only through its clock wrapper).

        >>> crash = lambda ms: StoreStep(0, StoreAction.CRASH, ms=ms)
        >>> crash(1).clock_after(5), crash(None).clock_after(5)
        (1, 5)
        """
        if self.action is StoreAction.TICK and self.ms is not None:
            return ms + self.ms
        if self.action in (StoreAction.SET_CLOCK, StoreAction.CRASH) and self.ms is not None:
            return self.ms
        return ms

    def span(self, names: Sequence[str], n_l0: int) -> tuple[str, ...]:
        """The SSTs a `compact(start, length)` takes of `names` (L0 first, `n_l0` of them): from
        `start % len(names)`, `length` more, widened to every older L0 SST when it starts in L0 (a valid
        span by construction); () without sources.

        >>> compact = StoreStep(0, StoreAction.COMPACT, start=0, length=0)
        >>> compact.span(("l0a", "l0b", "run"), 2), compact.span((), 0)
        (('l0a', 'l0b'), ())
        """
        if not names:
            return ()
        first = self.start % len(names)
        last = min(len(names) - 1, first + self.length)
        if first < n_l0:
            last = max(last, n_l0 - 1)
        return tuple(names[first : last + 1])


@attrs.frozen
class StoreHistory:
    """A ttl history decoded: whether it `opened` with options, the store's `default_ttl` and periodic
    compaction `interval` (None without them), and its other steps."""

    opened: bool
    default_ttl: int | None
    interval: int | None
    steps: tuple[StoreStep, ...]


def store_history(history: HistoryLike) -> StoreHistory:
    """The ttl history's options and steps (`MalformedHistory` for an action it does not name, or an
    `open` that is not first).

    >>> from types import SimpleNamespace as A
    >>> h = store_history(A(domain="total", actions=[A(name="open", args={"default_ttl": 5}),
    ...                                              A(name="put", args={"key": "a", "value": "1"})]))
    >>> h.opened, h.default_ttl, h.interval, [(s.step, s.action, s.key) for s in h.steps]
    (True, 5, None, [(1, 'put', b'a')])
    """
    actions = history.actions
    opened = bool(actions) and actions[0].name == StoreAction.OPEN
    options = actions[0].args if opened else {}
    steps = decoded("ttl", history, STORE_DECODERS)[1 if opened else 0 :]
    if any(s is None for s in steps):
        raise MalformedHistory(
            "ttl", next(i for i, s in enumerate(steps, opened) if s is None), "open", "another"
        )
    return StoreHistory(
        opened,
        options.get(StoreArg.DEFAULT_TTL),
        options.get(StoreArg.INTERVAL),
        tuple(s for s in steps if s),
    )


def _store_step(action: StoreAction) -> Decoder[StoreStep | None]:
    return lambda step, args: StoreStep.of(step, args, action)


STORE_DECODERS: dict[str, Decoder[StoreStep | None]] = {
    StoreAction.OPEN: lambda step, args: None,
    **{a: _store_step(a) for a in StoreAction if a is not StoreAction.OPEN},
}


class StoreLabel(Word):
    """What a ttl observation's `(step, label)` key holds: reads, the step's error, audit findings."""

    GET = "get"
    SCAN = "scan"
    ERROR = "error"
    KEPT = "expired value kept by compaction"
    LEFT = "expired value left by periodic compaction"


class RowArg(Word):
    """Argument keys of a `row` action (ttl_compaction and ttl_codec); `run` only in ttl_compaction
    (0 is the newest run), `create` optional in ttl_codec (a v0 row has none)."""

    RUN = "run"
    KEY = "key"
    VALUE = "value"
    SEQ = "seq"
    CREATE = "create"
    EXPIRE = "expire"


class CompactionAction(Word):
    """A step of a ttl_compaction history: a `row` of a run, or a `compact` of every run."""

    ROW = "row"
    COMPACT = "compact"


class CompactionArg(Word):
    """Argument keys of `compact(now, last)`: the compaction's clock reading, whether it is the last run."""

    NOW = "now"
    LAST = "last"


class CompactionLabel(Word):
    """What a ttl_compaction observation's `(step, label)` key holds: a compaction's output rows."""

    OUTPUT = "output"


class CodecAction(Word):
    """A step of a ttl_codec history: `row`s, one `encode`, then damage applied to the encoded bytes."""

    ROW = "row"
    ENCODE = "encode"
    CORRUPT = "corrupt"
    TRUNCATE = "truncate"


class CodecArg(Word):
    """Argument keys of `encode(version, created)`, `corrupt(offset, xor)` and `truncate(length)`."""

    VERSION = "version"
    CREATED = "created"
    OFFSET = "offset"
    XOR = "xor"
    LENGTH = "length"


class CodecLabel(Word):
    """What a ttl_codec observation's `(step, label)` key holds: the bytes, and what a reader made of them."""

    ENCODED = "encoded"
    DECODED = "decoded"


class CodecTag(Word):
    """The first field of a `decoded` observation's metadata tuple (its rows are numbered instead)."""

    META = "meta"


@attrs.frozen
class SstRow:
    """A `row` action (ttl_compaction, ttl_codec): a row of an SST, its key and value as bytes (a None value
    is a tombstone), its `seq`, `create` (None: a v0 row has none) and `expire` timestamps, and for
    ttl_compaction its `run` (0 the newest). ttl_compaction writes keys and values as text, ttl_codec as hex.

    >>> SstRow.of_hex(0, {"key": "6b", "seq": 1, "expire": 9}).as_tuple()
    (b'k', None, 1, None, 9)
    """

    step: int
    key: bytes
    value: bytes | None
    seq: int
    create: int | None
    expire: int
    run: int | None = None

    @classmethod
    def of_text(cls, step: int, args: Mapping[str, Any]) -> SstRow:
        value = args.get(RowArg.VALUE)
        encoded = None if value is None else value.encode()
        return cls(step, args[RowArg.KEY].encode(), encoded, args[RowArg.SEQ], args[RowArg.CREATE],
                   args[RowArg.EXPIRE], args[RowArg.RUN])  # fmt: skip

    @classmethod
    def of_hex(cls, step: int, args: Mapping[str, Any]) -> SstRow:
        value = args.get(RowArg.VALUE)
        decoded_value = None if value is None else bytes.fromhex(value)
        return cls(step, bytes.fromhex(args[RowArg.KEY]), decoded_value, args[RowArg.SEQ], args.get(RowArg.CREATE),
                   args[RowArg.EXPIRE])  # fmt: skip

    def as_tuple(self) -> tuple[bytes, bytes | None, int, int | None, int]:
        """`(key, value, seq, create, expire)`."""
        return self.key, self.value, self.seq, self.create, self.expire


@attrs.frozen
class CompactAt:
    """A ttl_compaction `compact(now, last)`: every run compacted at `now`, into the last run or not."""

    step: int
    now: int
    last: bool

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> CompactAt:
        return cls(step, args[CompactionArg.NOW], args[CompactionArg.LAST])


def compaction_steps(history: HistoryLike) -> tuple[SstRow | CompactAt, ...]:
    """A ttl_compaction history's rows and compactions, decoded (`MalformedHistory` for another action)."""
    return decoded(
        "ttl_compaction",
        history,
        {CompactionAction.ROW: SstRow.of_text, CompactionAction.COMPACT: CompactAt.of},
    )


@attrs.frozen
class Encode:
    """A ttl_codec `encode(version, created)`: the rows so far written as one SST of format `version`."""

    step: int
    version: int
    created: int

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any]) -> Encode:
        return cls(step, args[CodecArg.VERSION], args[CodecArg.CREATED])


@attrs.frozen
class Damage:
    """A ttl_codec `corrupt(offset, xor)` or `truncate(length)` of the encoded bytes, each applied alone.

    >>> Damage(0, CodecAction.CORRUPT, offset=5, xor=1).applied(b"ab"), Damage(0, CodecAction.TRUNCATE, length=3).applied(b"ab")
    (b'ac', b'a')
    """

    step: int
    kind: CodecAction
    offset: int = 0
    xor: int = 0
    length: int = 0

    @classmethod
    def of(cls, step: int, args: Mapping[str, Any], kind: CodecAction) -> Damage:
        if kind is CodecAction.TRUNCATE:
            return cls(step, kind, length=args[CodecArg.LENGTH])
        return cls(step, kind, offset=args[CodecArg.OFFSET], xor=args[CodecArg.XOR])

    def applied(self, data: bytes) -> bytes:
        """`corrupt`: the byte at `offset % len` xor-ed with `xor` (non-zero); `truncate`: the first
        `length % len` bytes (a strict prefix)."""
        if self.kind is CodecAction.TRUNCATE:
            return data[: self.length % len(data)]
        at = self.offset % len(data)
        return data[:at] + bytes([data[at] ^ self.xor]) + data[at + 1 :]


CodecStep = SstRow | Encode | Damage
CODEC_DECODERS: dict[str, Decoder[CodecStep]] = {
    CodecAction.ROW: SstRow.of_hex,
    CodecAction.ENCODE: Encode.of,
    CodecAction.CORRUPT: lambda step, args: Damage.of(step, args, CodecAction.CORRUPT),
    CodecAction.TRUNCATE: lambda step, args: Damage.of(step, args, CodecAction.TRUNCATE),
}


def codec_steps(history: HistoryLike) -> tuple[CodecStep, ...]:
    """A ttl_codec history's rows, its encoding and the damage done to it, decoded (`MalformedHistory` for
    another action)."""
    return decoded("ttl_codec", history, CODEC_DECODERS)


def codec_round_trip(
    history: HistoryLike,
    encode: Callable[[Sequence[SstRow], int, int], bytes],
    decode: Callable[[bytes], frozenset],
    refused: type[Exception],
) -> dict[tuple[int, str], frozenset]:
    """What a ttl_codec history observes of a codec (the model's and Spark's alike): at each `encode` step the
    bytes `encode(rows so far, created, version)` wrote, or the name of the `refused` error it raised (which
    ends the history), and what `decode` makes of them; at each damage, what `decode` makes of the bytes
    damaged.

    >>> h = type("H", (), {"actions": (type("A", (), {"name": "encode", "args": {"version": 1, "created": 5}}),)})
    >>> codec_round_trip(h, lambda rows, created, version: bytes([created]), lambda data: frozenset({(data[0],)}), ValueError)
    {(0, 'encoded'): frozenset({('05',)}), (0, 'decoded'): frozenset({(5,)})}
    """
    rows: list[SstRow] = []
    observed: dict[tuple[int, str], frozenset] = {}
    data = None
    for step in codec_steps(history):
        match step:
            case SstRow():
                rows.append(step)
            case Encode(step=at, version=version, created=created):
                try:
                    data = encode(rows, created, version)
                except refused as error:
                    observed[(at, CodecLabel.ENCODED)] = frozenset({(type(error).__name__,)})
                    return observed
                observed[(at, CodecLabel.ENCODED)] = frozenset({(data.hex(),)})
                observed[(at, CodecLabel.DECODED)] = decode(data)
            case Damage(step=at) if data:
                observed[(at, CodecLabel.DECODED)] = decode(step.applied(data))
    return observed


class StateAction(Word):
    """A step of a ttl_spark_state history: `open(ttl_ms)` first; `put(key, value)`, `get(key)` and
    `delete(key)` requests; `trigger(wait_ms, crash?)` runs the requests since the last trigger as one
    micro-batch, after waiting `wait_ms` of real time (a `crash` fails the batch after its answers are
    written, before Spark's commit, and the query restarts and re-runs it); `restart` stops and starts
    the query between batches."""

    OPEN = "open"
    PUT = "put"
    GET = "get"
    DELETE = "delete"
    TRIGGER = "trigger"
    RESTART = "restart"


class StateArg(Word):
    """Argument keys of a ttl_spark_state history: the state's `ttl_ms`, a request's `key` and `value`, a
    trigger's `wait_ms` and `crash`."""

    TTL_MS = "ttl_ms"
    KEY = "key"
    VALUE = "value"
    WAIT_MS = "wait_ms"
    CRASH = "crash"


class StateLabel(Word):
    """What a ttl_spark_state observation's `(step, label)` key holds at a trigger: each `get`'s answer
    (`(index, key, value or None)`), the batch's `clock` (`batchTimestampMs` in its offsets), `now`
    (what `current_timestamp()` was in the batch, in epoch ms), `run` (which start of the query planned
    the batch and read its clock: 0 the first, each restart's driver the next), and `killed` (the crash point a driver running
    the batch was seen killed at: its marker, then its death by SIGKILL)."""

    GET = "get"
    CLOCK = "clock"
    NOW = "now"
    RUN = "run"
    KILLED = "killed"
