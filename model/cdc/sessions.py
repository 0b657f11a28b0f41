"""What a CDC history's sessions commit: its transactions, in commit order, each checked against the table.

`committed(history)` reads the `begin`, `write` and `commit` steps of each session (`CdcAction`): a
transaction is numbered in the order it began and takes its writes in order; each write must suit
the table as its session sees it (the committed table with the transaction's own writes over it:
`InvalidWrite` otherwise), may not touch a key another open transaction wrote (PostgreSQL would block
the session: `InvalidCdcStep`), and a transaction commits with at least one write. A PostgreSQL
restart with a transaction open, a `write` or `commit` with none open and a second `begin` are
`InvalidCdcStep`. Transactions still open at the end never committed. End LSNs are PostgreSQL's to
give: `committed` leaves them 0 (`with_ends` fills them in from what was observed).

>>> from types import SimpleNamespace as A
>>> steps = [A(name="begin", args={"session": 0}), A(name="write", args={"session": 0, "op": "insert", "key": 1, "value": "a"}),
...          A(name="commit", args={"session": 0})]
>>> committed(A(actions=steps))
[Transaction(number=0, end_lsn=0, writes=(Write(op='insert', key=1, value='a', count=1),))]
>>> committed(A(actions=steps[1:]))
Traceback (most recent call last):
...
frontier_harness.model.errors.InvalidCdcStep: step 0 (write): no transaction is open in session 0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from frontier_harness.model.cdc.replication import Transaction, Write, apply
from frontier_harness.model.errors import InvalidCdcStep
from frontier_harness.model.vocabulary import HistoryLike
from frontier_harness.model.vocabulary.cdc import CdcAction, CdcArg, Op


def committed(history: HistoryLike) -> list[Transaction]:
    """The transactions the history's sessions commit, in commit order (see the module docstring)."""
    table: dict[int, str | None] = {}
    open_: dict[Any, Transaction] = {}
    done: list[Transaction] = []
    began = 0
    for step, action in enumerate(history.actions):
        name, args = action.name, action.args
        session = args.get(CdcArg.SESSION)
        if name == CdcAction.BEGIN:
            if session in open_:
                raise InvalidCdcStep(step, name, f"session {session} has a transaction open already")
            open_[session], began = Transaction(began, 0, ()), began + 1
        elif name in (CdcAction.WRITE, CdcAction.COMMIT) and session not in open_:
            raise InvalidCdcStep(step, name, f"no transaction is open in session {session}")
        elif name == CdcAction.WRITE:
            write = _write(step, args)
            _unblocked(step, session, write, open_)
            txn = open_[session]
            seen = apply(table, txn)  # the session's view: the committed table, its own writes over it
            apply(seen, attrs.evolve(txn, writes=(write,)))  # InvalidWrite when the view cannot take it
            open_[session] = attrs.evolve(txn, writes=(*txn.writes, write))
        elif name == CdcAction.COMMIT:
            txn = open_.pop(session)
            if not txn.writes:
                raise InvalidCdcStep(step, name, f"transaction {txn.number} commits no write")
            table = apply(table, txn)
            done.append(txn)
        elif name == CdcAction.POSTGRES_RESTART and open_:
            raise InvalidCdcStep(step, name, f"sessions {sorted(open_)} have a transaction open")
    return done


def _write(step: int, args: Mapping[str, Any]) -> Write:
    """The write a step's arguments describe; `InvalidCdcStep` names one that describes none: an op not
    `insert`, `update` or `delete`, a key that is not a whole number, a count below 1.

    >>> _write(3, {"op": "insert", "key": 1, "count": 0})
    Traceback (most recent call last):
    ...
    frontier_harness.model.errors.InvalidCdcStep: step 3 (write): count 0 is not a whole number >= 1
    """
    op, count = args.get(CdcArg.OP), args.get(CdcArg.COUNT, 1)
    key: Any = args.get(CdcArg.KEY)
    if op not in (Op.INSERT, Op.UPDATE, Op.DELETE):
        raise InvalidCdcStep(step, CdcAction.WRITE, f"op {op!r} is not one of insert, update, delete")
    for name, value, least in ((CdcArg.KEY, key, None), (CdcArg.COUNT, count, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or (least is not None and value < least):
            bound = f" >= {least}" if least is not None else ""
            raise InvalidCdcStep(step, CdcAction.WRITE, f"{name} {value!r} is not a whole number{bound}")
    return Write(op, key, args.get(CdcArg.VALUE), count)


def _unblocked(step: int, session: Any, write: Write, open_: Mapping[Any, Transaction]) -> None:
    for other, txn in open_.items():
        held = {k for w in txn.writes for k in w.keys}
        if other != session and held & set(write.keys):
            raise InvalidCdcStep(
                step, CdcAction.WRITE, f"keys {sorted(held & set(write.keys))} are held by session {other}"
            )


def with_ends(transactions: list[Transaction], ends: Mapping[int, int]) -> list[Transaction]:
    """The transactions the history committed, each with the end LSN observed for its number (`ends` holds
    every one: a transaction it lacks was never seen committed).

    >>> with_ends([Transaction(0, 0, ())], {0: 120})
    [Transaction(number=0, end_lsn=120, writes=())]
    """
    return [attrs.evolve(t, end_lsn=ends[t.number]) for t in transactions]
