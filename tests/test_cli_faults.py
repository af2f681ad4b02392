"""The command lines as a user's shell runs them: old spellings, signals, pipes, a
full disk (subprocesses; each test failed before its fix)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")


def py(*args, **kw):
    return subprocess.run([sys.executable, *args], env=ENV, text=True,
                          capture_output=True, timeout=300, **kw)


def tiny(text, run_dir, steps=2):
    return ["--preset", "tiny", "--corpus", "offline", "--path", text, "--steps",
            str(steps), "--warmup", "1", "--eval-chars", "60", "--threads", "1",
            "--quiet", "--run-dir", str(run_dir)]


@pytest.mark.parametrize("module", ["train", "evaluate", "sample", "data"])
def test_the_old_spelling_is_not_a_silent_no_op(tmp_path, text, module):
    """`python -m txl_mini.train ...` used to print nothing, make nothing, exit 0."""
    res = py("-m", f"txl_mini.{module}", *tiny(text, tmp_path / "r"))
    assert res.returncode != 0 and res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert last == f"use: python -m txl_mini {module} ..."
    assert not (tmp_path / "r").exists()


def test_the_cli_module_runs_its_command(tmp_path, text):
    res = py("-m", "txl_mini.cli.train", *tiny(text, tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "r" / "last.pt").is_file() and "trained 2 steps" in res.stdout
