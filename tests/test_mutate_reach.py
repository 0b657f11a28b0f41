"""The line tracer finds code imported through a symlinked package (the `frontier_harness/` layout)
under the real path the mutation engine watches and compiles mutants at."""

from __future__ import annotations

import importlib.util
import os

from frontier_harness.properties.mutate.reach import LineTracer


def test_code_imported_through_a_symlink_is_traced_at_its_real_path(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "target.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    os.symlink(real, tmp_path / "linked")
    spec = importlib.util.spec_from_file_location("linked_target", tmp_path / "linked" / "target.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.f.__code__.co_filename != str(real / "target.py")  # the frames carry the link
    with LineTracer({str(real / "target.py")}) as tracer:
        module.f(0)
    assert tracer.lines == {(str(real / "target.py"), line) for line in (1, 2, 4)}
