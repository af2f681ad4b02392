"""Issue 31, the seventeenth probe: a run's last.pt replaced by a folder while train
ran ended 'not a regular file; refusing to replace it; no checkpoint was written yet
(--resume r starts it again)', exit 1, and that --resume then refused the folder.
The line now names the folder as --resume does, with its advice, exit 2 (a run
directory's file that is no file: input to fix, README's exit statuses)."""

import os

from test_cli_faults import py, tiny, txl  # noqa: F401

PROG = "python -m txl_mini train"
FOLDER = "r/last.pt is a directory, not a file of the run; move it away\n"


def test_last_pt_replaced_by_a_folder_while_it_trains(tmp_path, text):
    swap = ("import os, sys; from txl_mini.cli.train import main; "
            "sys.exit(main(sys.argv[1:], on_step=lambda s: s == 2 and "
            "(os.remove('r/last.pt'), os.mkdir('r/last.pt'))))")
    res = py("-c", swap, *tiny(text, "r", steps=6), "--save-every", "2",
             cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"{PROG}: error: {tmp_path}/r/last.pt: not a regular file; "
                          f"refusing to replace it; {FOLDER}"), res.stderr
    assert "starts it again" not in res.stderr
    # and what it says is what --resume says
    again = txl("train", "--resume", "r", cwd=tmp_path)
    assert again.returncode == 2 and again.stderr == f"{PROG}: error: {FOLDER}"
    assert os.path.isdir(tmp_path / "r" / "last.pt")
