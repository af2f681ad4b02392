"""The wheel that Colab's `pip install` builds holds every module of txl_mini.

The chapters' first cell installs the package from the repository; a subpackage left
out of the wheel would import fine here (from the checkout) and fail only there. So
this builds the wheel from a copy of the sources, installs it into an empty folder and
imports every module from that folder, in a process that cannot see the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_layout import MODULES, chapter_modules  # the package's modules, read once

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "txl_mini"


def test_the_wheel_holds_every_module(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(PACKAGE, src / "txl_mini",
                    ignore=shutil.ignore_patterns("__pycache__"))
    run = dict(capture_output=True, text=True, timeout=300)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist"), str(src)], **run)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("txl_mini-*.whl")
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)], **run)
    assert installed.returncode == 0, installed.stderr[-2000:]

    wanted = sorted(m for m in MODULES if m != "txl_mini.__main__")  # runs the CLI
    assert "txl_mini.cli" in wanted and "txl_mini.cli.train" in wanted
    assert chapter_modules() <= set(wanted), "a chapter imports a lost module"
    probe = ("import importlib, json, sys\n"
             "print(json.dumps({m: importlib.import_module(m).__file__ "
             "for m in sys.argv[1:]}))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    # cwd outside the checkout, and the installed folder first on the path
    got = subprocess.run([sys.executable, "-c", probe, *wanted], cwd=tmp_path, env=env,
                         **run)
    assert got.returncode == 0, got.stderr[-2000:]
    files = json.loads(got.stdout)
    outside = {m: f for m, f in files.items() if not f.startswith(str(site))}
    assert not outside, f"imported from elsewhere, not from the wheel: {outside}"
    # and the command line's entry point runs from the wheel
    listed = subprocess.run([sys.executable, "-m", "txl_mini", "--help"], cwd=tmp_path,
                            env=env, **run)
    assert listed.returncode == 0 and "train" in listed.stdout, listed.stderr
