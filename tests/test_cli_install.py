"""The command lines in a Python that lacks what txl_mini needs (subprocesses)."""

import subprocess
import sys

from test_cli_faults import ENV, one_line


def test_a_python_without_torch_is_told_what_to_install(tmp_path):
    """A fresh virtual environment, txl_mini on its path but not torch: `python -m
    txl_mini train` gave a ModuleNotFoundError traceback (11 lines)."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    res = subprocess.run([python, "-m", "txl_mini", "train", "--preset", "tiny"],
                         env=ENV, text=True, capture_output=True, timeout=60)
    assert one_line(res, 1) == (
        f"python -m txl_mini train: error: this Python ({python}) has no torch, "
        "which txl_mini needs: pip install -r requirements.txt")
