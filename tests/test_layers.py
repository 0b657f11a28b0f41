"""The layer contracts (`[tool.importlinter]` in pyproject.toml) hold, and a forbidden import breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "spark_impl", "properties", "pandas_impl", "frontier_harness")
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
)


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", LINT_IMPORTS, "--config", str(tree / "pyproject.toml"), "--no-cache"]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)


def _copy(source: Path, dest: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(
            source / package, dest / package, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(source / "pyproject.toml", dest / "pyproject.toml")
    return dest


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory) -> Path:
    """A copy of the packages and the contracts, every contract kept (checked once: each run takes seconds)."""
    tree = _copy(ROOT, tmp_path_factory.mktemp("clean"))
    assert _lint_imports(tree).returncode == 0, _lint_imports(tree).stdout
    return tree


@pytest.mark.parametrize(
    "module, forbidden, contract",
    [
        (
            "model/time/antichain.py",
            "import frontier_harness.spark_impl.session",
            "model is the specification",
        ),
        (
            "spark_impl/time/collection.py",
            "from frontier_harness.model.time.antichain import Antichain",
            "spark_impl shares only",
        ),
        (
            "properties/engine/runner.py",
            "import frontier_harness.spark_impl.session",
            "the harness engine and the checks know no Spark",
        ),
        (
            "properties/engine/runner.py",
            "import frontier_harness.properties.checks.registry",
            "properties by role",
        ),
        (
            "properties/checks/time/laws.py",
            "import frontier_harness.properties.adapters.model",
            "properties by role",
        ),
        ("model/ttl/store.py", "import frontier_harness.model.catalog.plan", "capabilities"),
        (
            "spark_impl/time/collection.py",
            "import frontier_harness.spark_impl.reclocking.remap",
            "capabilities",
        ),
        (
            "properties/checks/ttl/store.py",
            "import frontier_harness.properties.checks.ingestion.resumption",
            "capabilities",
        ),
        ("spark_impl/ttl/row.py", "from frontier_harness import Speed", "the facade is for users"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(clean_tree, tmp_path, module, forbidden, contract):
    tree = _copy(clean_tree, tmp_path)
    path = tree / module
    path.write_text(path.read_text() + f"\n{forbidden}  # planted\n")
    result = _lint_imports(tree)
    assert result.returncode == 1, result.stdout
    assert f"{contract}" in result.stdout and "BROKEN" in result.stdout


FLOORS = ("model", "spark_impl", "properties/checks")  # each holds one folder per capability


def _lines(paths: list[Path]) -> int:
    return sum(len(path.read_text().splitlines()) for path in paths)


def floor_shares(floor: Path) -> dict[str, float]:
    """Each capability folder's share of its floor's lines of Python (files at the floor's root count in
    the floor, in no folder)."""
    total = _lines(list(floor.rglob("*.py")))
    folders = [d for d in floor.iterdir() if d.is_dir() and (d / "__init__.py").exists()]
    return {d.name: _lines(list(d.rglob("*.py"))) / total for d in folders}


@pytest.mark.parametrize("floor", FLOORS)
def test_no_capability_folder_holds_over_a_third_of_its_floor(floor):
    """The house as docs/architecture.md draws it: no room holds more than a third of its floor, so a
    folder that grows past it is split by capability (as `ingestion/` was into `streaming/` and
    `event_time/`)."""
    shares = floor_shares(ROOT / floor)
    assert len(shares) >= 5, shares
    assert max(shares.values()) <= 1 / 3, {k: f"{v:.0%}" for k, v in sorted(shares.items())}
