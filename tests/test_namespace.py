"""Installed beside a user's code, the harness shadows none of it: every package lives under
`frontier_harness`, so a project with its own `model` package and `properties.py` imports both."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_project_with_its_own_model_and_properties_imports_both(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text("OWNER = 'user'\n")
    (tmp_path / "properties.py").write_text("OWNER = 'user'\n")
    script = textwrap.dedent(
        """
        import model, properties
        from frontier_harness.model.time.antichain import Antichain
        from frontier_harness.model.time.domains import Total
        from frontier_harness.properties.cli.main import main
        from frontier_harness.properties.checks.registry import SUITES
        assert (model.OWNER, properties.OWNER) == ("user", "user"), (model, properties)
        assert Antichain.of(Total(), [2, 1]).elements == (1,)
        assert main(["list"]) == 0 and "collections" in SUITES
        print("both")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("both")
