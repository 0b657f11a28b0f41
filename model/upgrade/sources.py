"""The sources' rules: how many, of which kind, reading what.

- A restart reads the newest `offsets/N` and gives each of its lines to a source, by position: a
  different number of sources fails the restart with a bare `AssertionError` (`OffsetSeq.toStreamProgress`).
- A source of another kind at a position is not allowed (Spark's guide): what the restart does depends on
  the two sources, so the model refuses to judge it (`CannotJudge`).
- A file source knows the files it has read by path (its log, `sources/<i>/`): a new path (the input
  moved or copied) makes every file under it new, read again from the start, and the records of a copy
  are counted twice, silently. Another option that binds offsets (Kafka's `subscribe`,
  `subscribePattern`, `assign`, our upstream log's `path`) changed: the offsets logged describe the old
  one; the guide calls the results unpredictable.

>>> old = [{"kind": "file", "files": ["file:///prod/in/b0.json"]}]
>>> new = [{"kind": "file:json", "options": {"path": "/staging/in"}}]
>>> [d.verdict.value for d in source_differences(old, new)]
['restarts, results change']
>>> source_differences(old, new + new)[0].error[:40]
'AssertionError: There are [1] sources in'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from frontier_harness.model.errors import CannotJudge
from frontier_harness.model.upgrade.difference import FILE_SOURCE, GUIDE, OFFSET_SEQ, Difference
from frontier_harness.model.vocabulary.event_time import SourceKey
from frontier_harness.model.vocabulary.upgrade import Area, Verdict

Source = Mapping[str, Any]
# A checkpoint's kind (read from the offset's shape) and the plan kinds it stands for.
KINDS = {"file": "file:", "kafka": "kafka", "frontier_upstream_events": "frontier_upstream_events"}
SHOWN_FILES = 3


def source_differences(old: Sequence[Source], new: Sequence[Source]) -> list[Difference]:
    """The differences between the old job's sources and the new job's."""
    if len(old) != len(new):
        return [
            Difference(
                Area.SOURCES,
                f"{len(old)} -> {len(new)} sources",
                Verdict.RESTART_FAILS,
                "a restart gives each source the offset logged at its position; the numbers must agree",
                OFFSET_SEQ,
                error=(
                    f"AssertionError: There are [{len(old)}] sources in the checkpoint offsets and now there are "
                    f"[{len(new)}] sources requested by the query. Cannot continue. (no error class)"
                ),
                fix=f"keep the query's {len(old)} source(s); a query that reads another source needs its own checkpoint",
            )
        ]
    found = []
    for i, (before, after) in enumerate(zip(old, new)):
        _same_kind(i, before, after)
        found += _options(i, before, after)
    return found


def _same_kind(i: int, old: Source, new: Source) -> None:
    before, after = str(old[SourceKey.KIND]), str(new[SourceKey.KIND])
    if before == "unknown" or after == "unknown":
        return
    matches = after.startswith(KINDS[before]) if before in KINDS else before == after
    if not matches:
        raise CannotJudge(
            f"source {i}: {before} -> {after}",
            f"a source of another kind is not allowed ({GUIDE}); what the restart does depends on the two sources",
        )


def _options(i: int, old: Source, new: Source) -> list[Difference]:
    options = dict(new.get(SourceKey.OPTIONS) or {})
    files = old.get(SourceKey.FILES)
    path = options.get("path")
    if files is not None and path is not None:
        return _moved(i, list(files), str(path))
    before = dict(old.get(SourceKey.OPTIONS) or {})
    if SourceKey.OPTIONS not in old or before == options:
        return []
    changed = sorted(k for k in set(before) | set(options) if before.get(k) != options.get(k))
    shown = ", ".join(f"{k}: {before.get(k)!r} -> {options.get(k)!r}" for k in changed)
    if str(new[SourceKey.KIND]).startswith("file:") and "path" in changed:
        rows = f"every file under {options.get('path')!r} is new to the source and read from the start"
    else:
        rows = "the offsets logged for the old options are applied to the new ones: what is read again or skipped is the source's"
    return [
        Difference(
            Area.SOURCE,
            f"source {i}'s {shown}",
            Verdict.RESULTS_CHANGE,
            "the options that bind a source's offsets are fixed by its checkpoint; changing them is generally not allowed and its results unpredictable",
            GUIDE if "path" not in changed else FILE_SOURCE,
            rows=rows,
        )
    ]


def _moved(i: int, files: list[str], path: str) -> list[Difference]:
    """A file source reading `path` on a checkpoint whose log names `files`."""
    directory = _directory(path)
    elsewhere = [f for f in files if not _under(_local(f), directory)]
    if not elsewhere:
        return []
    roots = sorted({str(PurePosixPath(_local(f)).parent) for f in elsewhere})
    shown = ", ".join(PurePosixPath(_local(f)).name for f in elsewhere[:SHOWN_FILES])
    more = f" and {len(elsewhere) - SHOWN_FILES} more" if len(elsewhere) > SHOWN_FILES else ""
    return [
        Difference(
            Area.SOURCE,
            f"source {i} reads {path!r}; its log names {len(elsewhere)} file(s) read under {', '.join(roots)}",
            Verdict.RESULTS_CHANGE,
            "a file source knows the files it has read by their paths: under a new path every file is new",
            FILE_SOURCE,
            rows=(
                f"every file under {path!r} is read again from the start: the records of the {len(elsewhere)} "
                f"file(s) already read ({shown}{more}), if copied there, are counted twice"
            ),
        )
    ]


def _local(path: str) -> str:
    parsed = urlparse(path)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else path


def _directory(path: str) -> str:
    """The directory a file source's `path` option reads (a glob reads its directory's files)."""
    local = _local(path)
    return str(PurePosixPath(local).parent) if any(c in local for c in "*?[{") else local.rstrip("/")


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
