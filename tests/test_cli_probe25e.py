"""Probe 25's run-end findings (issue 31): a finished run resumed after its folders
moved re-made the old folder of its --out; a file that appeared at --out as the run
trained named no way out; a stop before --overwrite's clear said only 'last.pt is
kept (--resume)'. Subprocesses; each test failed before its fix."""

import importlib.util
import os
import shutil
import signal
import time

from test_cli_faults import one_line, start, tiny, txl, wait_for
from test_cli_probe16h import THEIRS, _appears_after_first_line

PROG = "python -m txl_mini train"
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def test_a_moved_finished_run_does_not_make_its_old_out_folder(tmp_path, text):
    """`mv mvA mvB; train --resume mvB/r` said 'wrote /.../mvA/o.pt from its last.pt'
    and made mvA again for the copy. The folder of a finished run's --out that is
    gone is not made: one line says so, names the model and the way to write it."""
    a, b = tmp_path / "mvA", tmp_path / "mvB"
    a.mkdir()
    assert txl("train", *tiny(text, a / "r"), "--out", a / "o.pt").returncode == 0
    a.rename(b)
    res = txl("train", "--resume", b / "r")
    line = one_line(res, 2)  # 2, not 0, since probe 26 (test_cli_probe26f)
    assert line == (
        f"{PROG}: {b / 'r'} is finished: step 2 of 2; --out {a / 'o.pt'} not written: "
        f"its folder {a} is gone (moved?); the model is {b / 'r'}/last.pt (evaluate "
        f"and sample take {b / 'r'}/last.pt); --resume cannot change --out: make the "
        f"folder again (mkdir -p {a}) and --resume {b / 'r'} writes it there")
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
    line = one_line(txl("train", "--resume", b / "r"), 2)
    assert f"not written: its folder {tmp_path / 'gone'} is gone (moved?)" in line
    assert not (tmp_path / "gone").exists()


def test_a_file_that_appeared_at_out_names_the_way_out(tmp_path, text):
    """It ended 'error: ap.pt: a file appeared there while we ran; it is left as it
    is; the model is ap/last.pt' (exit 1), without the remedy that works: move it
    away, and --resume writes the model there (and draws curves.png, not drawn)."""
    r, out = tmp_path / "ap", tmp_path / "ap.pt"
    code, err = _appears_after_first_line(["train", *tiny(text, r, steps=4), "--out",
                                           out], out)
    assert out.read_bytes() == THEIRS
    drew = not (r / "curves.png").exists() and HAS_MPL
    assert code == 1 and err == (
        f"{PROG}: error: {out}: a file appeared there while we ran; it is left as it "
        f"is; the model is {r}/last.pt; move that file away, and --resume {r} writes "
        "the model there" + (" and draws its curves.png, not drawn" if drew else "")
        + "\n"), err
    out.rename(tmp_path / "mine.pt")  # the remedy the line names
    line = one_line(txl("train", "--resume", r), 0)
    assert line.endswith(f"; wrote {out} from its last.pt" + (
        "; drew its curves.png, which was missing" if drew else "")), line
    assert out.read_bytes()[:2] == b"PK"
    assert (tmp_path / "mine.pt").read_bytes() == THEIRS
    assert (r / "curves.png").exists() == HAS_MPL


def test_a_stop_before_overwrites_clear_says_the_old_run_is_untouched(tmp_path, text):
    """`train ... --run-dir o --overwrite` terminated while its corpus was built said
    'o/last.pt, the last checkpoint written, is kept (--resume o)': true, but the
    user asked to start over. Now: the old run is untouched, --resume continues it,
    the same command again starts over."""
    o = tmp_path / "o"
    assert txl("train", *tiny(text, o, steps=4), "--pause-at", "2").returncode == 0
    before = {n: (o / n).read_bytes() for n in os.listdir(o)}
    proc = start(["train", "--preset", "tiny", "--offline-chars", "100000000",
                  "--threads", "1", "--quiet", "--run-dir", str(o), "--overwrite"])
    wait_for(lambda: (o / ".lock").exists())
    time.sleep(1)  # generating 100M characters takes a minute
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == (
        f"{PROG}: terminated (SIGTERM) before training started; --overwrite had not "
        f"begun: the old run in {o} is untouched; --resume {o} continues it, and the "
        "same command again starts over\n"), err
    assert {n: (o / n).read_bytes() for n in os.listdir(o)} == before
    res = txl("train", "--resume", o)  # the way on it names
    assert res.returncode == 0, res.stderr
    assert "trained 4 steps" in res.stdout
