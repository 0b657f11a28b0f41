"""The *ttl_codec* suite: the SST byte format round-trips, reads v0, and never yields a wrong row.

Histories (`frontier_harness.properties.checks.ttl.strategies.store.draw_codec_history`): rows, one `encode`
(v0 or v1), then `corrupt` (one byte xor-ed) and `truncate` (a strict prefix)
actions, each applied alone to the encoded bytes. Observations: the encoded
bytes (hex), what the one reader decodes from them (metadata and rows), and
what it decodes from each damaged copy; every damaged copy must be a typed
`CorruptSst`, never rows.

Two properties: `round_trip_and_corruption` checks the implementation's codec
against the history itself (rows back equal, v0 read by the same reader,
damage always typed); `agrees_with_model` compares it with the model's codec
(`frontier_harness.model.ttl.codec`) observation for observation, so the same bytes come out
and each codec reads what the other wrote. The Spark implementation's codec is
`frontier_harness.spark_impl.ttl.codec` (driver-side; no Spark job).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from frontier_harness.model.errors import CorruptSst, InvalidRow
from frontier_harness.model.ttl.codec import decode_sst, encode_sst
from frontier_harness.model.ttl.row import Row
from frontier_harness.model.vocabulary.ttl import (
    CodecAction,
    CodecArg,
    CodecLabel,
    CodecTag,
    RowArg,
    SstRow,
    codec_round_trip,
    codec_steps,
)
from frontier_harness.properties.checks.ttl.strategies.store import draw_codec_history
from frontier_harness.properties.engine.history import History
from frontier_harness.properties.engine.suite import (
    Observation,
    Outcome,
    Property,
    Reference,
    Suite,
    differential,
    observations,
)

DAMAGE = (CodecAction.CORRUPT, CodecAction.TRUNCATE)  # each applied alone to the encoded bytes


def rows_of(history: History) -> list[Row]:
    """The history's rows as model rows (hex keys and values decoded)."""
    return [Row(*s.as_tuple()) for s in codec_steps(history) if isinstance(s, SstRow)]


def decoded(data: bytes) -> frozenset:
    """What the model's reader makes of `data`: metadata and numbered rows, or the error's name."""
    try:
        info, rows = decode_sst("sst", data)
    except CorruptSst as error:
        return frozenset({(type(error).__name__,)})
    head = (
        CodecTag.META,
        info.format_version,
        tuple(int(f) for f in info.row_features),
        info.creation_timestamp,
        info.min_ts,
        info.max_ts,
    )
    return frozenset(
        {head}
        | {
            (i, r.key.hex(), None if r.value is None else r.value.hex(), r.seq, r.create_ts, r.expire_ts)
            for i, r in enumerate(rows)
        }
    )


def observe(history: History) -> Observation:
    """The model codec's observations."""
    encode = lambda rows, created, version: encode_sst([Row(*r.as_tuple()) for r in rows], created, version)  # noqa: E731
    return codec_round_trip(history, encode, decoded, InvalidRow)


def expected_rows(history: History) -> frozenset:
    """The numbered rows a correct round trip returns."""
    return frozenset(
        (i, r.key.hex(), None if r.value is None else r.value.hex(), r.seq, r.create_ts, r.expire_ts)
        for i, r in enumerate(rows_of(history))
    )


def laws(history: History, obs: Observation) -> Outcome:
    """Round trip equals the rows; every damaged copy is a typed `CorruptSst`."""
    for step, action in enumerate(history.actions):
        got = obs.get((step, CodecLabel.DECODED))
        if action.name == CodecAction.ENCODE and got is not None:
            rows = frozenset(t for t in got if t[0] != CodecTag.META)
            if rows != expected_rows(history):
                return Outcome(
                    ok=False,
                    message=f"round trip at step {step} returned {sorted(rows, key=repr)}",
                    expected=expected_rows(history),
                    actual=rows,
                    step=step,
                )
        if action.name in DAMAGE and got is not None and got != frozenset({("CorruptSst",)}):
            return Outcome(
                ok=False,
                message=f"damaged SST at step {step} decoded to {sorted(got, key=repr)}",
                actual=got,
                step=step,
            )
    return Outcome(ok=True)


def check_laws(impl: Any, histories: Sequence[History]) -> list[Outcome]:
    """The implementation's codec observations against the histories themselves."""
    return [laws(h, o) for h, o in zip(histories, observations(impl, "observe_ttl_codec", histories))]


def events(history: History) -> list[str]:
    found = set()
    for a in history.actions:
        if a.name == CodecAction.ENCODE:
            found.add(f"format v{a.args[CodecArg.VERSION]}")
        if a.name in DAMAGE:
            found.add(f"{a.name} of an encoded SST")
    rows = [a.args for a in history.actions if a.name == CodecAction.ROW]
    if any(r.get(RowArg.VALUE) is None for r in rows):
        found.add("tombstone row")
    if any(r[RowArg.SEQ] >= 2**63 for r in rows):
        found.add("seq above 2^63")
    if "format v1" in found and rows and all(RowArg.CREATE not in r for r in rows):
        found.add("format v1 rows without create_ts")
    return sorted(found)


SUITE = Suite(
    name="ttl_codec",
    doc="TTL SST codec: round trip in v0 and v1, v0 read by the v1 reader, corruption always typed; "
    "model and spark_impl codecs agree.",
    properties=(
        Property(
            "round_trip_and_corruption",
            "Rows come back equal; damaged bytes are always CorruptSst.",
            draw_codec_history,
            check_laws,
            events,
        ),
        Property(
            "agrees_with_model",
            "Same bytes and same decodings as the model's codec.",
            draw_codec_history,
            differential(observe, "observe_ttl_codec"),
            events,
            reference=Reference.MODEL,
        ),
    ),
    default_impl="spark",
    reference=Reference.LAWS,  # rows back equal, damage always typed
    required_events=(
        "format v0",
        "format v1",
        "corrupt of an encoded SST",
        "truncate of an encoded SST",
        "tombstone row",
        "seq above 2^63",
        "format v1 rows without create_ts",
    ),
    domains=("total",),
)
