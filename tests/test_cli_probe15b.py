"""A fifteenth probe of the command lines, three more findings (subprocesses; each
failed before its fix): a tabulate.py in the working folder broke torch's exit
handler after a good run; names ending in '/.' slipped past the trailing-'/' checks;
two contradictory TORCH_FORCE_* settings made every good checkpoint 'corrupt'."""

import os
import subprocess
import sys

from test_cli_faults import ENV, one_line, run_dir, tiny, txl  # noqa: F401

PROG = "python -m txl_mini"


def test_a_tabulate_py_here_is_not_a_traceback_after_a_good_run(tmp_path):
    """torch's exit handler printed its compile times by importing tabulate: a
    tabulate.py in the working folder made that a 12-line traceback after exit 0."""
    from cli_text import words
    (tmp_path / "text.txt").write_text(words(2000))
    (tmp_path / "tabulate.py").write_text("x = 1\n")
    res = txl("train", *tiny("text.txt", "r"), cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_a_name_ending_in_slash_dot_is_a_folder(run_dir):  # noqa: F811
    """`--out off/.` wrote a file 'off', `--path text.txt/.` read text.txt."""
    line = one_line(txl("data", "offline", "--chars", "2000", "--out", "off/.",
                        cwd=run_dir), 2)
    assert line == f"{PROG} data offline: error: --out off/. names a folder; give a "\
        "file name"
    line = one_line(txl("train", *tiny("text.txt/.", "r2"), cwd=run_dir), 2)
    assert line == f"{PROG} train: error: --path text.txt/.: text.txt is a file, not "\
        "a directory; drop the trailing '/.'"
    assert not (run_dir / "off").exists() and not (run_dir / "r2").exists()


def test_contradictory_torch_settings_are_named_not_a_corrupt_file(run_dir):  # noqa: F811
    env = {**ENV, "TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1",
           "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
    res = subprocess.run([sys.executable, "-m", "txl_mini", "evaluate", "r", "--chars",
                          "200", "--threads", "1"], cwd=run_dir, env=env, text=True,
                         capture_output=True, timeout=300)
    line = one_line(res, 2)
    assert "torch refused TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD, " \
           "TORCH_FORCE_WEIGHTS_ONLY_LOAD in the environment" in line, line
    assert "corrupt" not in line.split("(")[0], line
    assert os.path.getsize(run_dir / "r" / "best.pt") > 0
