"""Probe 7, signals, the lock, several ranks and imports (subprocesses; each test
failed before its fix). Where a moment cannot be hit by timing, an audit hook
(sys.addaudithook, in a launcher script) acts at it: the command runs unchanged."""

import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, py


@pytest.mark.parametrize("module", ["txl_mini.train", "txl_mini.cli.train"])
def test_the_old_spelling_in_a_removed_folder_is_one_line(tmp_path, module):
    """Finding 5: `python -m txl_mini.train` (and txl_mini.cli.train) in a folder
    since removed failed in torch's import, 'Intel oneMKL FATAL ERROR', exit 2, where
    `python -m txl_mini train` says one line. The old spelling's refusal now comes
    before torch, and the removed folder is said for every spelling."""
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys; os.rmdir({str(gone)!r}); "
         f"os.execv(sys.executable, [sys.executable, '-m', {module!r}, '--steps', "
         "'2'])"], cwd=gone, env=ENV, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if module == "txl_mini.train":
        assert one_line(res, 1) == "use: python -m txl_mini train ..."
    else:
        assert one_line(res, 2) == ("python -m txl_mini: error: the current folder "
                                    "no longer exists; cd somewhere first")
    assert "torch" not in err


def test_the_old_spelling_does_not_load_torch(tmp_path):
    """Finding 5: its refusal comes before torch loads (seconds, to say one line)."""
    res = py("-X", "importtime", "-m", "txl_mini.sample", cwd=tmp_path)
    assert res.returncode == 1 and res.stderr.splitlines()[-1] == \
        "use: python -m txl_mini sample ..."
    assert " torch\n" not in res.stderr and "| torch\n" not in res.stderr
