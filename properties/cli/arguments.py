"""What the CLI's verbs share: argument types (each parses one flag's text or names what is wrong), and
the options of the verbs that run suites.

>>> non_negative_int("3")
3
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import attrs

from frontier_harness.model.errors import ModelError
from frontier_harness.properties.engine.config import Config
from frontier_harness.properties.engine.profiles import PROFILES, Profile


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


def directory(text: str) -> Path:
    """An argparse type: a directory, or a path where one can be made (not an existing file): refused before
    the run, not when its first counterexample is written there.

    >>> directory("/dev/null")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '/dev/null' is a file, not a directory
    """
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a directory")
    return path


def file_to_write(text: str) -> Path:
    """An argparse type: a file whose directory exists (not a directory itself).

    >>> file_to_write(".")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '.' is a directory, not a file
    """
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: its directory {str(path.parent)!r} does not exist")
    return path


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


def run_options(verb: argparse.ArgumentParser, default_profile: str | None) -> None:
    """The options of a verb that runs suites (`check`, `verify`): profile, counts, implementation, job,
    where files go."""
    verb.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=default_profile,
        help="dev, ci or thorough (default: [tool.frontier-harness] profile, else dev)",
    )
    verb.add_argument("--seed", type=non_negative_int, help="default: the profile's seed (0 unless set)")
    verb.add_argument(
        "--max-examples",
        type=positive_int,
        help="Hypothesis examples for suites checked against the model (at least 1)",
    )
    verb.add_argument(
        "--batched-examples",
        type=positive_int,
        help="Hypothesis examples for suites checked against an implementation (at least 1)",
    )
    verb.add_argument(
        "--screening",
        type=positive_int,
        help="histories the screening lane checks per property and domain (at least 1)",
    )
    verb.add_argument("--impl", help="implementation under test: spark (default), model, or module:factory")
    job_option(verb)
    verb.add_argument(
        "--upgrade-to",
        metavar="MODULE:FACTORY",
        help="with --suite upgrade and --job: the new job, restarted on the running job's checkpoint at a drawn batch",
    )
    verb.add_argument(
        "--out",
        type=directory,
        help="where counterexample files go (default .frontier-harness/counterexamples)",
    )
    verb.add_argument("--junit", type=file_to_write, help="write JUnit XML here")
    verb.add_argument(
        "--fail-fast", action="store_true", help="stop at the first failure (default: run everything)"
    )


def job_option(verb: argparse.ArgumentParser) -> None:
    verb.add_argument(
        "--job",
        metavar="MODULE:FACTORY",
        help="your streaming job (transform, write, read) in the streaming or stateful suite's trials (frontier_harness.properties.checks.streaming.job), or the job running now in the upgrade suite's",
    )


def profile_of(args: argparse.Namespace, config: Config) -> Profile:
    """The profile `--profile` (else the config's) names, with the counts the flags override. Counts lowered
    below the profile's no longer reach every hard case as audited (`Profile.judges_reach`): one not reached
    is named "not shown", never a failure of a correct implementation."""
    profile = config.profile(args.profile or config.get("profile"))
    overrides = {
        "max_examples": args.max_examples,
        "batched_examples": args.batched_examples,
        "screening_histories": args.screening,
        "batched_screening_histories": args.screening,
    }
    given = {k: v for k, v in overrides.items() if v is not None}
    lowered = any(v < getattr(profile, k) for k, v in given.items())
    judges = profile.judges_reach and not lowered
    return attrs.evolve(profile.seeded(args.seed), judges_reach=judges, **given)
