"""A fifteenth probe: a module of Python's own shadowed from a PYTHONPATH entry, not
the working folder (PYTHONPATH=scratch with a scratch/signal.py, or python -P with
PYTHONPATH=.), was not named: an 11-line traceback from our stop.py, or the old line
blaming torch's file for a json.py (subprocesses; each failed before)."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("name", ["signal", "json"])
@pytest.mark.parametrize("how", ["PYTHONPATH", "-P"])
def test_a_stdlib_module_shadowed_from_pythonpath_is_named(tmp_path, name, how):
    scratch = tmp_path / "scratch" if how == "PYTHONPATH" else tmp_path
    scratch.mkdir(exist_ok=True)
    (scratch / f"{name}.py").write_text("x = 1\n")
    (tmp_path / "x.txt").write_text("ab\n")
    flags = ["-P"] if how == "-P" else []
    env = {**os.environ, "PYTHONPATH": f"{scratch}{os.pathsep}{os.getcwd()}"}
    res = subprocess.run([sys.executable, *flags, "-m", "txl_mini", "data", "stats",
                          "x.txt"], cwd=tmp_path, env=env, text=True,
                         capture_output=True, timeout=300)
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr == (
        f"python -m txl_mini data stats: error: {scratch / name}.py shadows Python's "
        f"{name} module (its folder comes before Python's own on sys.path: "
        "PYTHONPATH?); rename it\n")
