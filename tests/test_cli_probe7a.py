"""Issue 31, seventh probe (a): messages and data input (the findings of fix-31t).

Each test runs `python -m txl_mini` in a subprocess, as a user would.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from cli_text import words
from test_cli_faults import ENV, one_line, tiny, txl
from test_cli_probe5b import squeezed_after, start

PROG = "python -m txl_mini"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A finished tiny run (last.pt written at step 2, best.pt) and its text."""
    d = tmp_path_factory.mktemp("run")
    (d / "t.txt").write_text(words(12_000))
    res = txl("train", *tiny(d / "t.txt", d / "r"), "--save-every", "1")
    assert res.returncode == 0, res.stderr
    return d / "r"


# -- 1. bench's out-of-memory advice ---------------------------------------------------

def test_bench_quick_out_of_memory_does_not_advise_quick():
    """`bench --quick` out of memory advised '..., or use --quick'."""
    p = start(["bench", "--quick", "--threads", "1", "--device", "cpu"])
    res = squeezed_after(p, b"long evaluation")  # its first benchmark
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    last = res.stderr.splitlines()[-1]
    assert re.fullmatch(r"python -m txl_mini bench: error: out of memory \(lower "
                        r"--batch, --eval-batch or --max-attn-len; ulimit -v limits "
                        r"this process to [\d,]+ MiB\)", last), last


# -- 2, 3. what becomes spaces ---------------------------------------------------------

def test_latin1_accents_get_a_note_with_their_count(tmp_path):
    """A Latin-1 text: its accented bytes became spaces without a word (the note was
    for UTF-8 only)."""
    fr = tmp_path / "fr.txt"
    fr.write_bytes(b"caf\xe9 na\xefve r\xe9sum\xe9 the cat sat on a mat " * 400)
    res = txl("train", *tiny(fr, tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert res.stderr == (
        f"{PROG} train: note: 1,600 characters of {fr} are outside ASCII (one byte "
        "each: it is not UTF-8; Latin-1, say): each becomes a space, as every byte "
        "outside a-z/A-Z does\n")


def test_a_text_without_letters_a_z_is_refused(tmp_path):
    """Chinese in UTF-8: a note, then a run on spaces alone."""
    zh = tmp_path / "zh.txt"
    zh.write_text("中文文本测试。" * 2000, encoding="utf-8")
    res = txl("train", *tiny(zh, tmp_path / "r", steps=1))
    assert one_line(res, 2) == (
        f"{PROG} train: error: --path {zh} has no letters a-z/A-Z: each of its bytes "
        "would become a space; give a text written in a-z/A-Z")
    assert not (tmp_path / "r").exists()


def test_a_text_mostly_not_letters_is_warned_about(tmp_path):
    """Under half of it letters a-z: a note, as for a word or two of French."""
    digits = tmp_path / "digits.txt"
    digits.write_text(words(2000) + "0123456789 " * 524)
    res = txl("train", *tiny(digits, tmp_path / "r"))
    assert res.returncode == 0 and res.stderr == (
        f"{PROG} train: warning: only 20% of {digits}'s first MiB are letters "
        "a-z/A-Z (under half); everything else becomes a space\n"), res.stderr


# -- 4, 5. dangling links --------------------------------------------------------------

@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_dangling_last_pt_in_a_run_directory_is_named_so(tmp_path, command):
    """'r is a directory with no best.pt or last.pt in it', while `ls` shows one."""
    os.symlink("gone.pt", tmp_path / "last.pt")
    res = txl(command, tmp_path)
    assert one_line(res, 2) == (
        f"{PROG} {command}: error: {tmp_path}/last.pt is a symbolic link to gone.pt, "
        "which is missing; give a checkpoint")


def test_resume_names_a_dangling_last_pt(tmp_path, run):
    """--resume: 'r/last.pt is missing, but the run wrote it ...'."""
    r = tmp_path / "r"
    shutil.copytree(run, r)
    os.remove(r / "last.pt")
    os.symlink("gone.pt", r / "last.pt")
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (
        f"{PROG} train: error: {r}/last.pt is a symbolic link to gone.pt, which is "
        f"missing, but the run wrote it at step 2 (config.json records it); put it "
        f"back to continue, or start the run again with --run-dir {r} --overwrite "
        "and its options")


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_dangling_path_link_names_path(tmp_path, run, command):
    """'LINK is a symbolic link to gone.txt, ...': every other --path error line
    begins with '--path LINK'."""
    link = tmp_path / "link.txt"
    link.symlink_to("gone.txt")
    argv = (tiny(link, tmp_path / "r") if command == "train" else
            [run, "--path", link])
    res = txl(command, *argv)
    assert one_line(res, 2) == (
        f"{PROG} {command}: error: --path {link} is a symbolic link to gone.txt, "
        "which is missing; give a text file")


# -- 6. a device or FIFO as the text ---------------------------------------------------

def test_a_device_or_fifo_as_the_text_is_bad_input(tmp_path, run):
    """'cannot read /dev/null: not a regular file', exit 1: the README lists a
    device as bad input, exit 2."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [(["evaluate", run, "--path", "/dev/null"], "evaluate",
              "--path /dev/null is a character device"),
             (["train", *tiny(fifo, tmp_path / "r")], "train",
              f"--path {fifo} is a FIFO (named pipe)"),
             (["data", "stats", "/dev/zero"], "data stats",
              "/dev/zero is a character device")]
    for argv, prog, what in cases:
        res = txl(*argv)
        assert one_line(res, 2) == (f"{PROG} {prog}: error: {what}, not a regular "
                                    "file; give a text file"), argv
    assert not (tmp_path / "r").exists()


# -- 7. a signal while data's imports run ----------------------------------------------

def test_a_signal_during_data_offline_imports_names_the_subcommand(tmp_path):
    """'python -m txl_mini data: terminated (SIGTERM)' in the first seconds, later
    'python -m txl_mini data offline: ...'."""
    p = subprocess.Popen([sys.executable, "-m", "txl_mini", "data", "offline",
                          "--chars", "100000", "--out", str(tmp_path / "o.txt")],
                         env=ENV, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    time.sleep(0.3)  # torch is being imported
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143 and err == (
        f"{PROG} data offline: terminated (SIGTERM)\n"), err
    assert os.listdir(tmp_path) == []


# -- 8. --distances in other digits ----------------------------------------------------

def test_distances_take_ascii_digits_only(tmp_path):
    """`--distances ١,٢` was read as 1,2 (then 'a distance must be >= 32')."""
    res = txl("data", "offline", "--distances", "١٢٨,٢٥٦", "--out", tmp_path / "o")
    assert one_line(res, 2) == (
        f"{PROG} data offline: error: argument --distances: expected comma-separated "
        "integers, got '١٢٨,٢٥٦' (see --help)")
    assert os.listdir(tmp_path) == []


# -- 9. a NaN loss after best.pt -------------------------------------------------------

def test_a_nan_after_best_pt_names_it(tmp_path, run):
    """'no checkpoint was written yet' with best.pt in the run directory."""
    r = tmp_path / "r"
    res = txl("train", *tiny(run.parent / "t.txt", r, steps=20), "--warmup", "10",
              "--lr", "1e6", "--eval-every", "1", "--save-every", "100")
    line = one_line(res, 1)
    assert re.fullmatch(
        rf"{PROG} train: error: loss is nan at step \d+; stopped, no last.pt was "
        rf"written yet, only {r}/best.pt; start over with other options and "
        "--overwrite", line), line
    assert (r / "best.pt").is_file() and not (r / "last.pt").exists()
