"""Probe 25's run-end findings (issue 31): a finished run resumed after its folders
moved re-made the old folder of its --out; a file that appeared at --out as the run
trained named no way out; a stop before --overwrite's clear said only 'last.pt is
kept (--resume)'. Subprocesses; each test failed before its fix."""

import os
import shutil

from test_cli_faults import one_line, tiny, txl

PROG = "python -m txl_mini train"


def test_a_moved_finished_run_does_not_make_its_old_out_folder(tmp_path, text):
    """`mv mvA mvB; train --resume mvB/r` said 'wrote /.../mvA/o.pt from its last.pt'
    and made mvA again for the copy. The folder of a finished run's --out that is
    gone is not made: one line says so, names the model and the way to write it."""
    a, b = tmp_path / "mvA", tmp_path / "mvB"
    a.mkdir()
    assert txl("train", *tiny(text, a / "r"), "--out", a / "o.pt").returncode == 0
    a.rename(b)
    res = txl("train", "--resume", b / "r")
    line = one_line(res, 0)
    assert line == (
        f"{PROG}: {b / 'r'} is finished: step 2 of 2; --out {a / 'o.pt'} not written: "
        f"its folder {a} is gone (moved?); nothing written; the model is "
        f"{b / 'r'}/last.pt (evaluate and sample take {b / 'r'}); --resume cannot "
        f"change --out: make the folder again and --resume {b / 'r'} writes it there")
    assert not a.exists() and sorted(os.listdir(tmp_path)) == ["corpus.txt", "mvB"]
    a.mkdir()  # the way the line names
    res = txl("train", "--resume", b / "r")
    assert one_line(res, 0).endswith(f"; wrote {a / 'o.pt'} from its last.pt")
    assert (a / "o.pt").read_bytes()[:2] == b"PK"
    (a / "o.pt").unlink()  # a deleted file, its folder there: written again, as before
    assert one_line(txl("train", "--resume", b / "r"), 0).endswith(
        f"; wrote {a / 'o.pt'} from its last.pt")
    shutil.rmtree(a)
    os.symlink(tmp_path / "gone", a)  # a link to a folder gone: not made either
    line = one_line(txl("train", "--resume", b / "r"), 0)
    assert f"not written: its folder {tmp_path / 'gone'} is gone (moved?)" in line
    assert not (tmp_path / "gone").exists()

