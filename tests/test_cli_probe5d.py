"""Issue 31, smaller findings of the fifth probe: a missing output folder, a file
replaced without a word, bench's flatness of one point, UTF-8 text taken for binary,
SIGTERM while the curves are drawn, a dangling link, data's stdout line, bad input
that exited 1 (subprocesses; each failed before its fix)."""
import os
import signal
import subprocess
import sys

import pytest
import torch
from cli_text import words
from test_cli_faults import ENV, one_line, start, tiny, txl, wait_for
from test_cli_streams import into

PROG = "python -m txl_mini"
OFFLINE = ["data", "offline", "--chars", "2000"]
BENCH = ["bench", "--quick", "--threads", "1", "--quiet", "--rounds", "1", "--steps",
         "1", "--max-attn-len", "128", "--long-segments", "20"]


# -- 1. a missing parent folder of --out / --json is made, as train makes it -----------

def test_data_offline_makes_the_folders_of_its_files(tmp_path):
    """`data offline --out a/b/c.txt` said 'directory a/b does not exist; create it
    first', exit 2, where `train --out a/b/c.pt` made a/b."""
    out, deps = tmp_path / "a" / "b" / "c.txt", tmp_path / "d" / "d.tsv"
    res = txl(*OFFLINE, "--out", out, "--deps-out", deps)
    assert res.returncode == 0, res.stderr
    assert len(out.read_text()) == 2000 and deps.read_text().startswith("cue\t")


def test_data_offline_refused_later_leaves_no_folder(tmp_path):
    """A refusal after the folders are made (the --out file is a user's, below)
    removes them again: nothing half-made is left."""
    mine = tmp_path / "mine.txt"
    mine.write_text("my notes\n")
    res = txl(*OFFLINE, "--deps-out", tmp_path / "x" / "y" / "d.tsv", "--out", mine)
    assert res.returncode == 2, res.stderr
    assert sorted(os.listdir(tmp_path)) == ["mine.txt"]


@pytest.fixture(scope="module")
def bench_20(tmp_path_factory):
    """One small bench at --long-segments 20, its JSON into a folder not there."""
    d = tmp_path_factory.mktemp("bench")
    res = txl(*BENCH, "--json", d / "a" / "b" / "r.json")
    return d, res


def test_bench_json_makes_its_folder(bench_20):
    """`bench --json a/b/c.json` said 'directory a/b does not exist', exit 2."""
    d, res = bench_20
    assert res.returncode == 0, res.stderr
    assert (d / "a" / "b" / "r.json").is_file()


def test_bench_refused_after_making_the_json_folder_leaves_none(tmp_path):
    """The memory check comes after --json's folder is made: refused, it is gone."""
    res = txl(*BENCH, "--batch", "100000000", "--json", tmp_path / "a" / "b" / "r.json")
    assert one_line(res, 2).startswith(f"{PROG} bench: error: training (--batch ")
    assert os.listdir(tmp_path) == []


# -- 2. data offline --out over a file of other contents -------------------------------

def test_data_offline_does_not_replace_a_users_file_silently(tmp_path):
    """`data offline --out README.md` replaced the file without a word, exit 0, where
    train asks for --overwrite. The same corpus again is harmless and still written."""
    readme = tmp_path / "README.md"
    readme.write_text("# my project\n")
    res = txl(*OFFLINE, "--out", readme)
    assert one_line(res, 2) == (
        f"{PROG} data offline: error: --out {readme} already exists, with other "
        "contents; pass --overwrite to replace it")
    assert readme.read_text() == "# my project\n" and res.stdout == ""
    deps = tmp_path / "d.tsv"
    deps.write_text("mine\n")  # the same size check cannot tell a TSV: its contents do
    res = txl(*OFFLINE, "--out", tmp_path / "c.txt", "--deps-out", deps)
    assert one_line(res, 2).endswith(f"--deps-out {deps} already exists, with other "
                                     "contents; pass --overwrite to replace it")
    assert sorted(os.listdir(tmp_path)) == ["README.md", "d.tsv"]
    res = txl(*OFFLINE, "--out", readme, "--overwrite")
    assert res.returncode == 0 and len(readme.read_text()) == 2000, res.stderr
    again = txl(*OFFLINE, "--out", readme)  # byte-identical: written again, exit 0
    assert again.returncode == 0 and again.stdout == res.stdout, again.stderr
    other = txl(*OFFLINE, "--out", readme, "--seed", "1")  # same size, other text
    assert one_line(other, 2).endswith("with other contents; pass --overwrite to "
                                       "replace it")


# -- 3. bench's memory flatness compares two points ----------------------------------

def test_bench_flatness_compares_two_different_points(bench_20):
    """At --long-segments 20: 'peak 233.7 MiB after 20 segments vs 233.7 MiB after
    20 (1.000x)', a point compared with itself."""
    _, res = bench_20
    [line] = [x for x in res.stdout.splitlines() if x.startswith("memory flatness")]
    assert "after 20 segments vs " in line and "MiB after 10 (" in line, line


# -- 4. UTF-8 letters are not 'maybe not a text file' ----------------------------------

def test_accented_text_is_not_taken_for_binary(tmp_path):
    """French text in UTF-8 (35% of its bytes a-z) was warned about: 'only 35% of
    ...'s first MiB are letters a-z/A-Z; ... Is it a text file?'. It is text: the
    note says what becomes of its accented letters."""
    fr = tmp_path / "fr.txt"
    fr.write_text("Le café naïve à l'été, où ça déjà évité. " * 100, encoding="utf-8")
    res = txl("train", *tiny(str(fr), tmp_path / "r", steps=1))
    assert res.returncode == 0, res.stderr
    assert "Is it a text file?" not in res.stderr
    # 35% of its bytes are a-z, under half: a warning since the seventh probe
    assert res.stderr.startswith(f"{PROG} train: warning: only 35% of {fr}'s first MiB "
                                 "are letters a-z/A-Z (under half); everything else "
                                 "becomes a space\n"), res.stderr
    assert (f"{PROG} train: note: 1,100 characters of {fr} are outside ASCII (é, ï, "
            "à, ...): each of their UTF-8 bytes becomes a space, as every byte "
            "outside a-z/A-Z does") in res.stderr.splitlines(), res.stderr


def test_binary_bytes_are_still_warned_about(tmp_path):
    """NUL bytes are what a binary file has: the warning stays for it (a guard: the
    UTF-8 check must not silence it), and ASCII text with few letters a warning
    too (issue 31's seventh probe: it was a note)."""
    junk = tmp_path / "junk.bin"
    junk.write_bytes(words(2000).encode() + bytes(5760))  # 20% letters
    res = txl("train", *tiny(str(junk), tmp_path / "r", steps=1))
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith(
        f"{PROG} train: warning: only 20% of {junk}'s first MiB are letters a-z/A-Z "
        "(under half); everything else becomes a space. Is it a text file?\n"
    ), res.stderr
    digits = tmp_path / "digits.txt"
    digits.write_text(words(2000) + "0123456789 " * 524)
    res = txl("train", *tiny(str(digits), tmp_path / "r2", steps=1))
    assert res.returncode == 0 and res.stderr.startswith(
        f"{PROG} train: warning: only 20% of {digits}'s first MiB are letters "
        "a-z/A-Z (under half); everything else becomes a space\n"), res.stderr


# -- 5. SIGTERM while the last step's checkpoints and curves are written ---------------

def test_sigterm_while_the_curves_are_drawn_is_143(tmp_path, text):
    """A SIGTERM after best.pt of the last step (as curves.png was drawn) exited 0,
    with the summary line: the loop had set its flag and nobody looked at it."""
    r = tmp_path / "r"
    proc = start(["train", *tiny(text, r, steps=2), "--eval-every", "100"])
    wait_for(lambda: (r / "best.pt").exists())  # the final validation is done
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, (out, err)
    assert err.splitlines()[-1] == (
        f"SIGTERM after the last step: {r}/last.pt (step 2/2) and best.pt are saved "
        "and complete"), err
    assert "trained" not in out  # no summary line: the run was asked to stop
    for name in ("last.pt", "best.pt"):  # whole, loadable
        assert torch.load(r / name, weights_only=False)["state_dict"]
    assert (r / "curves.png").is_file()


# -- 6. data stats of a dangling link --------------------------------------------------

def test_a_dangling_link_is_named_so(tmp_path):
    """`data stats LINK`, LINK to a file gone: 'cannot read LINK: no such file' for a
    name `ls` shows. train's --path said the same."""
    link = tmp_path / "link.txt"
    link.symlink_to("gone.txt")
    res = txl("data", "stats", link)
    assert one_line(res, 2) == (f"{PROG} data stats: error: {link} is a symbolic link "
                                "to gone.txt, which is missing; give a text file")
    res = txl("train", *tiny(str(link), tmp_path / "r"))
    assert one_line(res, 2).endswith("which is missing; give a text file")


# -- 7. data's stdout failure names the subcommand -------------------------------------

@pytest.mark.parametrize("sub", ["stats", "offline"])
def test_data_stdout_failure_names_the_subcommand(tmp_path, sub):
    """`data stats F >/dev/full` said 'python -m txl_mini data: error: ...' where
    data's other lines say 'data stats:'."""
    f = tmp_path / "c.txt"
    f.write_text(words(2000))
    argv = (["data", "stats", str(f)] if sub == "stats" else
            [*OFFLINE, "--out", str(tmp_path / "o.txt")])
    res = into("full", argv)
    assert one_line(res, 1).startswith(
        f"{PROG} data {sub}: error: cannot write to standard output: No space left"), \
        res.stderr


# -- 8. bad input is exit 2 ------------------------------------------------------------

def test_a_text8_path_that_fails_verification_is_exit_2(tmp_path):
    """`data text8 --path F`, F not text8: exit 1, where every bad input file is 2."""
    bad = tmp_path / "text8"
    bad.write_text("garbage\n")
    res = txl("data", "text8", "--path", bad, "--quiet")
    assert one_line(res, 2).startswith(
        f"{PROG} data text8: error: text8 in {bad} failed verification: expected "
        "100,000,000 bytes"), res.stderr


def test_evaluate_refuses_nan_weights_with_exit_2(paused, tmp_path):
    """A checkpoint whose weights are NaN: exit 1, where every other bad checkpoint
    is exit 2."""
    ckpt = torch.load(paused / "last.pt", weights_only=False)
    for v in ckpt["state_dict"].values():
        if v.is_floating_point():
            v.fill_(float("nan"))
    torch.save(ckpt, tmp_path / "nan.pt")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "evaluate",
                          str(tmp_path / "nan.pt"), "--chars", "100", "--quiet"],
                         env=ENV, text=True, capture_output=True, timeout=300)
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[-1].endswith(
        "its weights are broken, so there is no bpc to report"), res.stderr
