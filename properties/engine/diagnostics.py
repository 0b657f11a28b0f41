"""Whose fault an exception is, and its traceback cut to the implementation's own frames.

An exception that escapes a property's check was raised either inside a call
to the implementation under test (some frame of its traceback runs a method of
that implementation object: `self is impl`), or on the harness side (the
model computing its expectation, the suite's own code). The first is the
implementation's failure; the second a generator/model disagreement (or, for
a history read from a file, a file that is not a valid history).

The implementation's own frames are those from its first method call inward,
without the harness's (`properties/`), the standard library's or installed
packages' frames: what a user needs is the line of *their* file that raised.

>>> describe(KeyError(0))
'KeyError: 0'
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from frontier_harness.properties.engine.errors import HarnessError, ImplementationError
from frontier_harness.properties.engine.infrastructure import InfrastructureError

PACKAGE = Path(__file__).resolve().parents[2]  # frontier_harness's own code, checked out or installed
HARNESS = tuple(str(PACKAGE / part) + os.sep for part in ("model", "properties", "spark_impl"))
LIBRARIES = tuple(
    str(Path(p).resolve()) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)
MAX_FRAMES = 12
RAISED_IN_CALL = "_frontier_harness_raised_in_call_of"  # the implementation whose call raised it (`called`)


def raised_by(exc: BaseException, impl: Any) -> bool:
    """Whether `exc` was raised inside `impl`'s code: out of a call of one of its methods the harness made
    (`called`: a static method, a function it delegates to, a first parameter named otherwise), or some frame
    of its traceback is a method of `impl` (`self is impl`)."""
    return getattr(exc, RAISED_IN_CALL, None) is impl or any(
        tb.tb_frame.f_locals.get("self") is impl for tb in _tracebacks(exc.__traceback__)
    )


def called(impl: Any, method: str, *args: Any) -> Any:
    """`impl.method(*args)`; what it raises is marked as raised out of that call (`raised_by`).

    >>> class Impl:
    ...     observe = staticmethod(lambda: {}["k"])
    >>> impl = Impl()
    >>> try:
    ...     called(impl, "observe")
    ... except KeyError as exc:
    ...     raised_by(exc, impl)
    True
    """
    try:
        return getattr(impl, method)(*args)
    except BaseException as exc:
        with contextlib.suppress(AttributeError, TypeError):  # an exception that takes no attribute
            setattr(exc, RAISED_IN_CALL, impl)
        raise


def set_up(impl: Any, impl_name: str, method: str = "prepare") -> None:
    """`impl.prepare()` (or `recover()`), whose failure is never a verdict: what `impl.infrastructure_failure`
    names is `InfrastructureError` (exit 3); anything else raised in the implementation's own code breaks its
    contract, `ImplementationError` naming its frames (exit 2); a raise in the harness's own code alone passes
    as it is (its bug).

    >>> class Impl:
    ...     prepare = lambda self: {}["settings"]
    ...     infrastructure_failure = lambda self, exc: "no settings server"
    >>> set_up(Impl(), "mine")
    Traceback (most recent call last):
    ...
    frontier_harness.properties.engine.infrastructure.InfrastructureError: mine: prepare() failed: no settings server
    """
    try:
        getattr(impl, method)()
    except (HarnessError, InfrastructureError):
        raise
    except (Exception, SystemExit) as exc:
        reason = infrastructure_reason(impl, impl_name, exc)
        if reason is not None:
            raise InfrastructureError(f"{impl_name}: {method}() failed: {reason}") from exc
        _blame(impl, impl_name, method, exc)


def infrastructure_reason(impl: Any, impl_name: str, exc: BaseException) -> str | None:
    """`impl.infrastructure_failure(exc)`: why `exc` is infrastructure (exit 3), or None (never for a
    `SystemExit`, a user's code's failure). A classifier that raises in the implementation's own code breaks
    its contract: `ImplementationError` naming its frames (exit 2), never the harness's bug (exit 4).

    >>> class Impl:
    ...     infrastructure_failure = lambda self, exc: "no server" if isinstance(exc, OSError) else None
    >>> infrastructure_reason(Impl(), "mine", ConnectionError()), infrastructure_reason(Impl(), "mine", SystemExit(0))
    ('no server', None)
    """
    if not isinstance(exc, Exception):
        return None
    try:
        return impl.infrastructure_failure(exc)
    except (HarnessError, InfrastructureError):
        raise
    except (Exception, SystemExit) as raised:
        _blame(impl, impl_name, "infrastructure_failure", raised)


def _blame(impl: Any, impl_name: str, method: str, exc: BaseException) -> NoReturn:
    """Raises `exc`, caught in the frame that called `impl.method`: as it is when every frame below that one
    is the harness's or a library's (the harness's bug), else as `ImplementationError` naming the
    implementation's own frames."""
    home, frames = _home(impl), traceback.extract_tb(exc.__traceback__)[1:]  # below the catching frame
    if all(_foreign(f.filename, home) for f in frames):
        raise exc
    shown = "".join(f"\n  at {frame}" for frame in own_frames(exc, impl))
    raise ImplementationError(f"{impl_name}: {method}() raised {describe(exc)}{shown}") from exc


def own_frames(exc: BaseException, impl: Any = None) -> tuple[str, ...]:
    """`file:line in function: source` for the frames of `exc` from `impl`'s first method inward that are
    neither the harness's nor a library's; the innermost frame when every one is (never empty)."""
    tbs = _tracebacks(exc.__traceback__)
    start = next((i for i, tb in enumerate(tbs) if tb.tb_frame.f_locals.get("self") is impl), 0)
    frames = traceback.extract_tb(exc.__traceback__)[start:]
    home = _home(impl)
    own = [f for f in frames if not _foreign(f.filename, home)] or frames[-1:]
    return tuple(_show(f) for f in own[-MAX_FRAMES:])


def describe(exc: BaseException) -> str:
    """`Type: message`, the message cut to 500 characters."""
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def full_traceback(exc: BaseException) -> str:
    """The whole Python traceback, harness frames included (`replay --trace`)."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _tracebacks(tb: TracebackType | None) -> list[TracebackType]:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _home(impl: Any) -> str | None:
    """The directory of the top-level package defining `impl`'s class (its own code, even when installed
    among the libraries), or None for the harness's own adapters."""
    module = sys.modules.get(type(impl).__module__.split(".")[0])
    where = getattr(module, "__file__", None)
    if impl is None or where is None:
        return None
    if not hasattr(module, "__path__"):  # a single-file module: that file only
        return str(Path(where).resolve())
    home = str(Path(where).resolve().parent) + os.sep
    return None if any(part.startswith(home) for part in HARNESS) else home


def _foreign(filename: str, home: str | None = None) -> bool:
    if filename.startswith("<"):
        return True
    path = str(Path(filename).resolve())
    if home is not None and path.startswith(home):
        return False
    return path.startswith(HARNESS) or path.startswith(LIBRARIES)


def _show(frame: traceback.FrameSummary) -> str:
    path, here = frame.filename, os.getcwd() + os.sep
    if path.startswith(here):  # a user's file as they name it, relative to where the command runs
        path = path[len(here) :]
    source = f": {frame.line}" if frame.line else ""
    return f"{path}:{frame.lineno} in {frame.name}{source}"
