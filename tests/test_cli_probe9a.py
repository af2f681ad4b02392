"""Faults a ninth probe of the command lines found (subprocesses; each failed before
its fix)."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny


@pytest.mark.parametrize("setting", ["MPLBACKEND", "matplotlibrc"])
def test_a_bad_matplotlib_setting_leaves_a_finished_run_at_exit_0(tmp_path, text,
                                                                 setting):
    """MPLBACKEND=bogus, or a matplotlibrc in the current folder with a dpi of -5:
    train wrote its checkpoints, then said 'error: Key backend: ...', exit 1, with no
    summary; the README promises that curves.png is only ever a warning."""
    env = dict(ENV, MPLBACKEND="bogus") if setting == "MPLBACKEND" else ENV
    if setting == "matplotlibrc":
        (tmp_path / "matplotlibrc").write_text("figure.dpi: -5\nsavefig.dpi: -5\n")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train",
                          *tiny(text, tmp_path / "r")], env=env, cwd=tmp_path,
                         text=True, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].startswith("trained 2 steps")  # the summary
    warning, = [line for line in res.stderr.splitlines() if "curves.png" in line]
    assert warning.startswith("python -m txl_mini train: warning: cannot draw "
                              "curves.png: ValueError: ")
    assert os.path.isfile(tmp_path / "r" / "last.pt")
    assert not os.path.exists(tmp_path / "r" / "curves.png")


def test_two_bar_settings_that_fail_together_are_refused_at_once(tmp_path, text):
    """TQDM_UNIT_SCALE=1 with TQDM_UNIT_DIVISOR=0 passed the start-up check (its bar
    counted to 2), then a bar past 999 divided by zero: a 30-line traceback, exit 1,
    config.json left."""
    env = dict(ENV, TQDM_UNIT_SCALE="1", TQDM_UNIT_DIVISOR="0")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train",
                          *tiny(text, tmp_path / "r", steps=1200)], env=env,
                         text=True, capture_output=True, timeout=300)
    line = one_line(res, 2)
    assert line.startswith("python -m txl_mini train: error: ")
    assert "TQDM_UNIT_SCALE='1'" in line and "TQDM_UNIT_DIVISOR='0'" in line
    assert not os.path.exists(tmp_path / "r")
