"""The public API, `frontier_harness`: what it exports is what the docs name, it loads lazily, the worked
examples and the guides import only from it, and it works installed from a wheel beside a user's project."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import frontier_harness
from tests.test_readme import README, copy_tracked

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "implementing.md"
# What a user reads and copies: these import from `frontier_harness` and nothing deeper.
USER_FACING = [
    README,
    GUIDE,
    *sorted((ROOT / "pandas_impl").glob("*.py")),
    ROOT / "streaming_job_example" / "__init__.py",
]
FROM_THE_FACADE = re.compile(r"^\s*(?:>>> )?from frontier_harness import ([\w, ]+)", re.MULTILINE)
DEEP_IMPORT = re.compile(r"^\s*(?:>>> )?(?:from|import) frontier_harness\.", re.MULTILINE)


def exported_in_the_guide() -> list[str]:
    """The names the guide's table of exports lists, in order (first column, backticked)."""
    section = GUIDE.read_text().split("\n## What `frontier_harness` exports", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)


def test_all_is_exactly_what_the_guide_lists():
    listed = exported_in_the_guide()
    assert len(listed) > 10, "the table was not found: is the heading still the same?"
    assert sorted(listed) == sorted(frontier_harness.__all__)


def test_every_name_the_docs_import_from_the_facade_is_exported():
    docs = [README, *sorted((ROOT / "docs").glob("*.md"))]
    imported = {
        n.strip() for d in docs for names in FROM_THE_FACADE.findall(d.read_text()) for n in names.split(",")
    }
    assert {"Implementation", "Speed"} <= imported
    assert not imported - set(frontier_harness.__all__)


def test_every_exported_name_resolves_and_is_kept():
    for name in frontier_harness.__all__:
        assert getattr(frontier_harness, name) is getattr(frontier_harness, name)
    assert frontier_harness.vocabulary.ttl.StoreAction.PUT == "put"  # each capability's words are loaded
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        frontier_harness.nothing  # noqa: B018


def _absolute_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
    return modules + [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]


@pytest.mark.parametrize("path", USER_FACING, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_guides_and_worked_examples_import_only_from_the_facade(path):
    assert not DEEP_IMPORT.findall(path.read_text())
    if path.suffix == ".py":  # nor through any import statement the pattern would miss
        assert not [m for m in _absolute_imports(path) if m.startswith("frontier_harness.")]


def test_the_worked_examples_do_import_the_facade():
    """What the test above allows is used: each worked example reads the harness's names from the facade."""
    for example in (
        "pandas_impl/collection.py",
        "pandas_impl/orders.py",
        "streaming_job_example/__init__.py",
    ):
        assert "frontier_harness" in _absolute_imports(ROOT / example), example


def _loaded_by(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter has loaded after `statement`."""
    code = f"{statement}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(done.stdout.split())


def test_a_spark_worker_importing_the_streaming_source_loads_no_hypothesis_rich_or_z3():
    loaded = _loaded_by("import frontier_harness.spark_impl.streaming.source")
    assert "pyspark" in loaded  # the import ran
    assert not loaded & {"hypothesis", "rich", "z3"}


def test_importing_the_facade_loads_nothing_until_a_name_is_used():
    assert not _loaded_by("import frontier_harness") & {"attrs", "hypothesis", "pyspark", "rich", "z3"}
    assert "hypothesis" in _loaded_by("from frontier_harness import check; check")


USER_PROJECT = {
    "model/__init__.py": "OWNER = 'user'\n",
    "properties.py": "OWNER = 'user'\n",
    "use_it.py": textwrap.dedent(
        """
        import model, properties
        import frontier_harness
        from frontier_harness import Implementation, Speed, StreamingJob, check

        assert (model.OWNER, properties.OWNER) == ("user", "user")
        results = check("collections", impl="frontier_harness.pandas_impl:factory", profile="dev",
                        domains=["total"], out=".fh")
        assert results and all(r.passed for r in results), results
        print(frontier_harness.__file__, sum(p.examples for r in results for p in r.results))
        """
    ),
}


@pytest.mark.slow  # builds a wheel and a virtualenv
def test_installed_from_a_wheel_beside_a_project_with_its_own_model_and_properties(tmp_path):
    """A regular (non-editable) install: the wheel built from the tracked files, in a fresh virtualenv whose
    dependencies are this environment's (read through a .pth, so this environment's own install of the
    harness, editable or not, is never imported)."""
    # A Spark session started earlier in this process put the checkout on PYTHONPATH (for its workers):
    # through it pip would find this checkout's frontier-harness "already installed" and skip the wheel.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    source = copy_tracked(tmp_path / "source")
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", source],
        check=True,
        env=env,
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    wheel = next((tmp_path / "dist").glob("frontier_harness-*.whl"))
    subprocess.run([*pip, "--python", python, "install", "-q", "--no-deps", wheel], check=True, env=env)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    ours = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    Path(site, "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    project = tmp_path / "project"
    for name, text in USER_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    ran = subprocess.run(
        [python, "use_it.py"], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    where, examples = ran.stdout.split()
    assert where.startswith(site) and int(examples) > 0
    listed = subprocess.run(
        [venv / "bin" / "frontier-harness", "list"], cwd=project, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0 and "collections" in listed.stdout, listed.stdout[-3000:]
