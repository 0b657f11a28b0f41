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

from frontier_harness.model.vocabulary import Word

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
    (`(index, key, value or None)`), the batch's `clock` (`batchTimestampMs` in its offsets), and `now`
    (what `current_timestamp()` was in the batch, in epoch ms)."""

    GET = "get"
    CLOCK = "clock"
    NOW = "now"
