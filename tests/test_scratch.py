"""What the harness makes in the machine's temporary directory for a user's job, or for its warm processes, is gone
once the process that made it exits (`spark_impl/scratch.py`): before, every `check` left a dozen directories."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

# Makes a directory, forks a child that leaves through the exit hooks it inherited, then says whether the
# directory is still there.
FORKED = """
import os, sys
from frontier_harness.spark_impl import scratch
made = scratch.directory("job-check-")
child = os.fork()
if child == 0:
    sys.exit(0)
os.waitpid(child, 0)
print(made, made.exists())
"""


def test_a_process_s_directories_are_gone_once_it_exits_and_a_forked_child_leaves_them_to_it():
    made, after_child = subprocess.run(
        [sys.executable, "-c", FORKED], capture_output=True, text=True, check=True
    ).stdout.split()
    assert after_child == "True", "a forked child's exit removed its parent's directory"
    assert Path(made).name.startswith("job-check-") and not Path(made).parent.exists()


def _make(found: multiprocessing.Queue) -> None:
    from frontier_harness.spark_impl import scratch

    found.put(str(scratch.directory("warm-")))


@pytest.mark.parametrize("start", ["spawn", "fork"])
def test_a_multiprocessing_child_s_are_gone_once_it_ends(start):
    """The harness's second process (`background`) is one; a forked one leaves without running `atexit`."""
    context = multiprocessing.get_context(start)
    found = context.Queue()
    child = context.Process(target=_make, args=(found,))
    child.start()
    made = Path(found.get(timeout=60))
    child.join(timeout=60)
    assert child.exitcode == 0 and not made.parent.exists()
