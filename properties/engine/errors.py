"""Errors the harness raises: bad input from users, as typed exceptions naming the value.

The CLI turns every `HarnessError` into exit code 2 and a one-line message; an
`InternalError` (the harness's own bug, raised in another process) into exit code 4
with the traceback it carries.
"""

from __future__ import annotations

from frontier_harness.model.vocabulary import MalformedHistory


class HarnessError(ValueError):
    """Base class: a usage or input error (exit code 2)."""


class BadHistory(HarnessError):
    """A history whose actions or arguments are malformed (as the harness reads it; a capability's decoding
    of its histories, shared with the implementations, raises `MalformedHistory`: `HISTORY_ERRORS` are both)."""


HISTORY_ERRORS = (BadHistory, MalformedHistory)


class CounterexampleFormatError(HarnessError):
    """A counterexample file that cannot be read; names the file and the field."""

    def __init__(self, path: object, field: str, problem: str):
        self.path, self.field, self.problem = path, field, problem
        super().__init__(f"{path}: field {field!r}: {problem}")


class UnknownSuite(HarnessError):
    """A suite or property name that is not registered."""


class ImplementationError(HarnessError):
    """An `--impl module:factory` that cannot be loaded or lacks a required method."""


class ConfigurationError(HarnessError):
    """A setting in the environment or configuration file that cannot be used; names the setting."""


class UnsupportedImplementation(HarnessError):
    """A suite asked of an implementation that lacks the method the suite calls."""


class CheckpointFormatError(HarnessError):
    """A Structured Streaming checkpoint file that cannot be read; names the file and the line."""

    def __init__(self, path: object, line: int | None, problem: str):
        self.path, self.line, self.problem = path, line, problem
        where = f"{path} line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")


class InvalidHistory(HarnessError):
    """A history read from a file that the suite cannot run: an unknown action, a missing argument, or
    one the model rejects when the file did not record a generator/model disagreement."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"not a valid history: {problem}")


class ContractViolation(HarnessError):
    """An implementation method returned something of the wrong shape: names the method, what the harness
    expected and what came back. Never a counterexample: the harness cannot judge such an answer."""

    def __init__(self, method: str, expected: str, got: str):
        self.method, self.expected, self.got = method, expected, got
        super().__init__(f"contract violation: {method} must return {expected}; it returned {got}")


class InternalError(Exception):
    """An exception the harness never should raise, raised in another process (a background lane): its
    type, message and the traceback as text, since the object itself may not survive pickling."""

    def __init__(self, kind: str, message: str, traceback: str):
        self.kind, self.traceback = kind, traceback
        super().__init__(f"{kind}: {message}")
