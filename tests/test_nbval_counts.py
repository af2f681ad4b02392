"""scripts/nbval_counts.py counts exact vs tolerant cells correctly (a synthetic
notebook)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "nbval_counts.py"


def _code(src, tags=(), outputs=()):
    return {"cell_type": "code", "source": src, "metadata": {"tags": list(tags)},
            "outputs": list(outputs), "execution_count": 1}


SYNTHETIC = {
    "nbformat": 4, "nbformat_minor": 5, "metadata": {},
    "cells": [
        {"cell_type": "markdown", "source": "# title", "metadata": {}},
        _code("print(1)",
              outputs=[{"output_type": "stream", "name": "stdout", "text": "1\n"}]),
        _code(["x = 1\n", "y = 2"]),  # no output: still compared (must stay silent)
        _code("   \n"),  # whitespace only: nbval ignores it, not counted
        _code("print(loss)", tags=["nbval-ignore-output", "hide-input"]),
        _code("slow()", tags=["nbval-skip"]),
        # nbval's comment marker counts as well
        _code("# NBVAL_IGNORE_OUTPUT\nprint(t)"),
        _code("plot()", tags=["hide-input"]),  # other tags do not change anything
    ],
}


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_counts_a_synthetic_notebook(tmp_path):
    nb = tmp_path / "synthetic.ipynb"
    nb.write_text(json.dumps(SYNTHETIC), encoding="utf-8")
    other = tmp_path / "all_exact.ipynb"
    other.write_text(json.dumps({"cells": [_code("1 + 1")]}), encoding="utf-8")

    res = _run("--json", nb, other)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    counts = data["notebooks"]
    assert counts["synthetic.ipynb"] == {
        "exact": 3, "ignored": 2, "skipped": 1, "code": 6}
    assert counts["all_exact.ipynb"] == {
        "exact": 1, "ignored": 0, "skipped": 0, "code": 1}
    assert data["total"] == {"exact": 4, "ignored": 2, "skipped": 1, "code": 7}

    table = _run(nb, other)
    assert table.returncode == 0, table.stderr
    rows = {line.split()[0]: line.split()[1:] for line in table.stdout.splitlines()[2:]
            if line and not line.startswith("-")}
    assert rows["synthetic.ipynb"] == ["6", "3", "2", "1", "50%"]
    assert rows["total"] == ["7", "4", "2", "1", "57%"]


def test_bad_input_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("not json", encoding="utf-8")
    for path in (bad, tmp_path / "missing.ipynb"):
        res = _run(path)
        assert res.returncode == 1
        assert res.stderr.startswith("nbval_counts: ") and "Traceback" not in res.stderr


def test_runs_on_the_book():
    res = _run()
    assert res.returncode == 0, res.stderr
    assert "total" in res.stdout and ".ipynb" in res.stdout
