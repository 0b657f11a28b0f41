"""What a wall time was measured on: the line `check` and `verify` print beside their own time.

A figure measured here on a loaded 2-core machine and one measured elsewhere differ by 2.5x for the
same command; printed with the load and the cores it ran on, a wall time can be set beside another.

>>> line = machine()
>>> line.startswith("load ") and " on " in line and line.endswith(" cores")
True
"""

from __future__ import annotations

import os


def machine() -> str:
    """The 1-minute load average and the core count, now."""
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def took(verb: str, seconds: float) -> str:
    """`verb`'s wall time and the machine it ran on, in one line.

    >>> took("check", 75.25).split(";")[0]
    'check took 75.2 s of wall time'
    """
    return f"{verb} took {seconds:.1f} s of wall time; this machine: {machine()}"
