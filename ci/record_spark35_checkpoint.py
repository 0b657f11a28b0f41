"""Record the checkpoint Spark 3.5 writes for `tests/jobs/upgrades.py:counts`: the upgrade matrix's old job
before the switch, as a production checkpoint from before Spark 4.0 is (no operator metadata).

The input is `tests/upgrade_runs.put`'s batches 0 and 1; the job runs under a PySpark 3.5 interpreter (its
own virtualenv: Spark 3.5 and 4.3 cannot share one) as `JOB` below, the matrix's `counts` written with 3.5's
API, one `availableNow` start as `upgrade_runs.run` does. What it writes to `tests/recorded/spark35_counts.tar.gz`:

- `checkpoint/`, without Hadoop's `.crc` files (a restored file source log is rewritten, and a file without
  its `.crc` is read unchecked);
- `rows.json`, the rows the run wrote, as `upgrade_runs.restarted` reads them;
- `root`, the directory it ran in: the file source log names its input files under it
  (`upgrade_runs.from_spark35` rewrites them where the checkpoint is restored).

Run from the repository root (about a minute, 320 MB of download the first time):

    python3 -m venv /tmp/spark35 && /tmp/spark35/bin/pip install 'pyspark==3.5.7'
    PYTHONPATH=. python ci/record_spark35_checkpoint.py /tmp/spark35/bin/python
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from tests.upgrade_runs import SPARK35, put

JOB = """
import json, sys
from pyspark.sql import SparkSession, functions as F
root = sys.argv[1]
spark = (SparkSession.builder.master("local[1]").config("spark.sql.shuffle.partitions", "1")
         .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false").getOrCreate())
assert spark.version.startswith("3.5"), spark.version
SCHEMA = "key string, event_time timestamp, data string, partition int, offset long"
records = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(root + "/job/input")
counted = records.withWatermark("event_time", "5 seconds").groupBy("key", F.window("event_time", "10 seconds"))
rows = []
query = (counted.agg(F.count("*").alias("n")).writeStream.outputMode("update")
         .foreachBatch(lambda batch, _: rows.extend(r.asDict(recursive=True) for r in batch.collect()))
         .option("checkpointLocation", root + "/checkpoint").trigger(availableNow=True).start())
query.awaitTermination()
ms = lambda t: round(t.timestamp() * 1000)
print(json.dumps([sorted([["key", r["key"]], ["n", r["n"]],
                          ["window", [["end", ms(r["window"]["end"])], ["start", ms(r["window"]["start"])]]]])
                  for r in rows]))
"""


def record(python: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="spark35-"))
    for batch in range(2):
        put(root / "job", batch)
    ran = subprocess.run(
        [python, "-c", JOB, str(root)], capture_output=True, text=True, env={**os.environ, "TZ": "UTC"}
    )
    if ran.returncode:
        sys.exit(ran.stderr[-3000:])
    rows = ran.stdout.strip().splitlines()[-1]
    (root / "rows.json").write_text(rows + "\n")
    (root / "root").write_text(f"{root}\n")
    with tarfile.open(SPARK35, "w:gz") as archive:
        for name in ("checkpoint", "rows.json", "root"):
            archive.add(root / name, name, filter=lambda m: None if m.name.endswith(".crc") else m)
    shutil.rmtree(root)
    print(f"recorded {SPARK35}: {len(json.loads(rows))} rows")


if __name__ == "__main__":
    record(sys.argv[1])
