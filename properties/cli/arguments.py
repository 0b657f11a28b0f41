"""Argument types the CLI's verbs share: each parses one flag's text or names what is wrong.

>>> non_negative_int("3")
3
"""

from __future__ import annotations

import argparse
import math

from frontier_harness.model.errors import ModelError


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (a count a verdict rests on: zero would check nothing).

    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number >= 1, got 0
    """
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def domain_name(text: str) -> str:
    """An argparse type: a time domain name `frontier_harness.model.time.domains.parse_domain` knows."""
    from frontier_harness.model.time.domains import parse_domain

    try:
        return parse_domain(text).name
    except ModelError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
