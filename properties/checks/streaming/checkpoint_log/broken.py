"""A broken law of a checkpoint history: where it shows, which law, what is wrong, and what it means.

>>> Broken(3, "monotone", "offsets of stream 0 go back").restart
''
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Broken:
    """One broken law: the action (step) where it shows, the law, and what is wrong; `restart` says
    what it means for a restart of the query when Spark's own restart would fail ("restart will fail:
    ..."), empty otherwise."""

    step: int
    law: str
    message: str
    restart: str = ""
