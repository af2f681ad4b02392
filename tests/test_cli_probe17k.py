"""Issue 31, the seventeenth probe, item 1: a run stopped before its end (--pause-at,
Ctrl-C) and resumed replaced, at its end, whatever file had been put at its --out
meanwhile (another model, a text), exit 0 and not a word: the resume's own check of
--out took the file there then for the run's. The run writes --out only when it
finishes, so with steps left a file there is someone else's: refused at the start of
the resume, one line, exit 2, as a finished run's resume refuses another model."""

import hashlib
import os

from test_cli_faults import one_line, py, tiny, txl

PROG = "python -m txl_mini train"


def _md5(path) -> str:
    return hashlib.md5(open(path, "rb").read()).hexdigest()


def _refused(tmp_path, someone: bytes) -> None:
    """--resume r with `someone` at r's --out o/m.pt: refused, both files kept; once
    it is moved away, the resume finishes and writes the model there."""
    out = tmp_path / "o" / "m.pt"
    out.parent.mkdir(exist_ok=True)  # the stopped run left no empty folder
    out.write_bytes(someone)
    last = _md5(tmp_path / "r" / "last.pt")
    res = txl("train", "--resume", "r", cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG}: error: --out {tmp_path}/o/m.pt holds a file the run did not "
        "write (it writes --out when it finishes); move it away, and --resume r "
        "writes the model there"), res.stderr
    assert res.stdout == ""
    assert out.read_bytes() == someone  # replaced before, rc 0
    assert _md5(tmp_path / "r" / "last.pt") == last
    assert sorted(os.listdir(tmp_path / "o")) == ["m.pt"]
    os.rename(out, tmp_path / "mine.pt")
    res = txl("train", "--resume", "r", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert out.exists() and (tmp_path / "mine.pt").read_bytes() == someone


def test_a_paused_run_leaves_a_model_put_at_its_out(tmp_path, text):
    res = txl("train", *tiny(text, "r", steps=4), "--pause-at", "2", "--out",
              "o/m.pt", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "o" / "m.pt").exists()  # the resume writes it
    _refused(tmp_path, _zoo())


def test_a_run_stopped_by_ctrl_c_leaves_a_text_put_at_its_out(tmp_path, text):
    stop = ("import sys; from txl_mini.cli.train import main; "
            "sys.exit(main(sys.argv[1:], on_step=lambda s: s == 2))")
    res = py("-c", stop, *tiny(text, "r", steps=4), "--out", "o/m.pt", cwd=tmp_path)
    assert res.returncode == 130 and "continue with --resume r" in res.stderr
    _refused(tmp_path, b"my notes, not a model\n")


def _zoo() -> bytes:
    return open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "book",
                             "zoo", "ch6_xl_s0.pt"), "rb").read()


def test_a_finished_run_still_says_which_model_it_keeps(tmp_path, text):
    """The finished case (resume_out.finish_out, moved beside the new check; this
    test passed before too): another model at --out is refused in its own words."""
    res = txl("train", *tiny(text, "r", steps=2), "--out", "o/m.pt", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (tmp_path / "o" / "m.pt").write_bytes(_zoo())
    res = txl("train", "--resume", "r", cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG}: error: --out {tmp_path}/o/m.pt holds a model other than "
        "r/last.pt's; move it away, and --resume r writes it again"), res.stderr
    assert (tmp_path / "o" / "m.pt").read_bytes() == _zoo()
