"""Time from `check`'s start to the first counterexample file, for every Spark-side planted bug in tests/.

Each bug runs as a user would meet it, `frontier-harness check --suite S --profile ci --impl
tests.M:F --fail-fast` (a planted streaming job: `--job tests.M:F`, through the trial suite's real
queries), in its own process (Spark's start included), and the counterexample
directory is watched: `first` is when a file first exists (the failure found), `final` when the
command exits (the file shrunk in place; `--fail-fast` stops there). Prints this machine's calibration
line first, then one line per bug and the medians (issue 23 asks for a median first file within half a
minute on 2 cores); `--markdown FILE` also writes them as the "first counterexample files" section of
FILE (docs/figures.md), headed by the date, the cores, the load and the calibration line.

Run: `python ci/first_file_times.py [--markdown docs/figures.md] [NAME ...]` from the repository root
(minutes: one Spark start a bug).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from frontier_harness.properties.bench import page
from frontier_harness.properties.bench.calibration import measure
from frontier_harness.properties.cli.bench import number

# factory (`tests.<module>:<name>`) -> the suite that must catch it
PLANTED = {
    "planted:spark_keeps_zero_diffs": "collections",
    "planted:spark_keeps_zero_count": "mutable_antichain",
    "planted:spark_non_minimal_frontier": "mutable_antichain",
    "planted_streaming:latest_offset_backwards": "streaming",
    "planted_streaming:commits_beyond_durable": "streaming",
    "planted_streaming:sink_not_idempotent": "streaming",
    "test_spark_ttl:spark_lt_in_compaction_filter": "ttl_compaction",
    "test_spark_ttl:spark_compaction_at_last_flush": "ttl",
    "test_spark_ttl:spark_no_clock_mark": "ttl",
    "test_suite_durable:compacts_past_data_upper": "durable_resumption",
    "test_suite_expiration:spark_keeps_updates_past_the_last_refresh": "expiration",
    "test_suite_expiration:spark_without_the_inputs_upper_branch": "expiration",
    "test_suite_expiration:spark_never_expires": "expiration",
    "test_suite_expiration:spark_without_the_frontier_check": "expiration",
    "test_suite_reclock:spark_mint_without_retraction": "reclock",
    "test_suite_resumption:spark_join_of_uppers": "resumption",
    "test_suite_summary:spark_ordered_ignores_earlier": "summary",
    "test_suite_summary:spark_complete_one_record_short": "summary",
    "test_suite_temporal:spark_retracts_at_upper": "temporal",
}
# planted jobs (`tests.<module>:<name>`, run with `--job`) -> the trial suite that must catch them: each
# trial a real streaming query, as a user's own job meets the suite
PLANTED_JOBS = {
    "jobs.stateful:promises_ten_seconds": "stateful",
    "jobs.stateful:one_batch_late": "stateful",
    "jobs.stateful:append_writer": "stateful",
    "jobs.stateful:processor_append_writer": "stateful",
    "jobs.joins:counted_append_writer": "stateful",
    "jobs.joins:outer_rows_dropped": "stateful",
}
POLL_S = 0.2


def timed(factory: str, suite: str, flag: str = "--impl") -> tuple[float | None, float, int]:
    """Seconds to the first counterexample file (None: none), to exit, and the exit code."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "frontier_harness.properties.cli.main", "check", "--suite", suite]
        command += ["--profile", "ci", flag, f"tests.{factory}", "--fail-fast", "--out", out]
        started, first = time.monotonic(), None
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None:
            if first is None and any(Path(out).glob("*.itf.json")):
                first = time.monotonic() - started
            time.sleep(POLL_S)
        if first is None and any(Path(out).glob("*.itf.json")):
            first = time.monotonic() - started
        return first, time.monotonic() - started, proc.returncode


def main(names: list[str], markdown: Path | None) -> None:
    calibration = measure()
    print(calibration.line(), flush=True)
    rows, firsts, finals = [], [], []
    planted = [(f, s, "--impl") for f, s in PLANTED.items()] + [
        (f, s, "--job") for f, s in PLANTED_JOBS.items()
    ]
    for factory, suite, flag in planted:
        if names and not any(n in factory for n in names):
            continue
        first, final, code = timed(factory, suite, flag)
        shown = "no file" if first is None else f"{first:6.1f} s"
        print(f"{factory:66} {suite:18} first {shown}  final {final:6.1f} s  exit {code}", flush=True)
        rows.append(
            [f"`{factory}`", suite, "no file" if first is None else number(first), number(final), code]
        )
        firsts.append(float("inf") if first is None else first)
        finals.append(final)
    medians = f"median over {len(firsts)}: first file {statistics.median(firsts):.1f} s, final {statistics.median(finals):.1f} s"
    print(medians)
    if markdown is not None:
        table = page.table(["planted bug", "suite", "first file (s)", "exit (s)", "exit code"], rows)
        body = f"{table}\n\n{medians[0].upper()}{medians[1:]}."
        command = "`python ci/first_file_times.py --markdown docs/figures.md`"
        page.write_section(markdown, "first counterexample files", body, command, calibration)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only the planted bugs whose factory contains one of these")
    parser.add_argument("--markdown", type=Path, help="also write the figures page's section")
    arguments = parser.parse_args()
    main(arguments.names, arguments.markdown)
