"""Settings from the user's `pyproject.toml`, under `[tool.frontier-harness]`.

```toml
[tool.frontier-harness]
profile = "dev"                      # default for `check`
corpus = "counterexamples"           # regression corpus `verify` replays
out = ".frontier-harness/counterexamples"

[tool.frontier-harness.profiles.ci]  # override any Profile field
batched_examples = 30
```

The command line wins over the file; the file wins over the built-in profiles.

>>> load_config(Path("/nonexistent")).profile("ci").name
'ci'
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import attrs

from frontier_harness.properties.engine.errors import HarnessError
from frontier_harness.properties.engine.profiles import PROFILES, Profile

DEFAULTS = {"profile": "dev", "corpus": "counterexamples", "out": ".frontier-harness/counterexamples"}


@attrs.frozen
class Config:
    """What `[tool.frontier-harness]` says, with defaults filled in."""

    values: dict[str, Any]
    profiles: dict[str, dict[str, Any]]

    def get(self, key: str) -> Any:
        return self.values[key]

    def profile(self, name: str) -> Profile:
        """A built-in profile with the file's overrides applied; a typed error naming a bad field."""
        if name not in PROFILES:
            raise HarnessError(f"unknown profile {name!r}: expected one of {', '.join(PROFILES)}")
        overrides = self.profiles.get(name, {})
        fields = {f.name for f in attrs.fields(Profile)} - {"name"}
        if unknown := set(overrides) - fields:
            raise HarnessError(f"[tool.frontier-harness.profiles.{name}]: unknown fields {sorted(unknown)}")
        try:
            return attrs.evolve(PROFILES[name], **overrides)
        except (TypeError, ValueError) as exc:
            raise HarnessError(f"[tool.frontier-harness.profiles.{name}]: {exc}") from exc


def load_config(directory: Path = Path(".")) -> Config:
    """Reads `directory/pyproject.toml` if there is one."""
    path = directory / "pyproject.toml"
    section: Any = {}
    if path.is_file():
        try:
            section = tomllib.loads(path.read_text()).get("tool", {}).get("frontier-harness", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise HarnessError(f"{path}: not valid TOML: {exc}") from exc
    table = _table(path, section)
    values = {**DEFAULTS, **{k: v for k, v in table.items() if k != "profiles"}}
    if unknown := set(values) - set(DEFAULTS):
        raise HarnessError(
            f"{path}: [tool.frontier-harness]: unknown keys {sorted(unknown)}: expected "
            f"{', '.join(DEFAULTS)} or profiles"
        )
    if wrong := {k: v for k, v in values.items() if not isinstance(v, str)}:
        raise HarnessError(
            f"{path}: [tool.frontier-harness]: {', '.join(wrong)} must be a string, got {wrong}"
        )
    return Config(values, _profiles(path, table))


def _table(path: Path, section: Any) -> dict[str, Any]:
    if not isinstance(section, dict):
        raise HarnessError(f"{path}: [tool.frontier-harness] must be a table")
    return section


def _profiles(path: Path, section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The profile overrides, each a table; a typed error naming one that is not."""
    profiles = section.get("profiles", {})
    if not isinstance(profiles, dict):
        raise HarnessError(f"{path}: [tool.frontier-harness.profiles] must be a table, got {profiles!r}")
    for name, overrides in profiles.items():
        if not isinstance(overrides, dict):
            raise HarnessError(
                f"{path}: [tool.frontier-harness.profiles.{name}] must be a table, got {overrides!r}"
            )
    return profiles
