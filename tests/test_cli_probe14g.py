"""The fourteenth hostile probe of the command lines, the findings of helper fix-31g:
bench --json over any file, names ending in '/', torch's compile cache folder, an
append-only folder, a --resume loop, a FIFO where a run wrote its --out
(subprocesses; each test failed before its fix)."""

import getpass
import json
import os
import shutil
import subprocess
import sys

import pytest
from cli_text import words
from test_cli_faults import ENV, one_line, tiny, txl

BENCH = ("bench", "--quick", "--quiet", "--threads", "1")
HUGE = ("--batch", "100000000")  # refused by the memory check, after every path's


def txl_env(env: dict, *argv):
    """txl under `env` (not the tests' ENV)."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=env, text=True, capture_output=True, timeout=300)


def error(cmd: str, line: str) -> str:
    return f"python -m txl_mini {cmd}: error: {line}"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A folder with text.txt and R, a 2-step run that wrote --out R/model.pt."""
    d = tmp_path_factory.mktemp("p14g")
    (d / "text.txt").write_text(words(2000))
    res = txl("train", *tiny(d / "text.txt", d / "R"), "--out", d / "R" / "model.pt")
    assert res.returncode == 0, res.stderr
    return d


# -- 1. bench --json replaces an earlier result only -----------------------------------

def test_bench_json_keeps_a_file_that_is_not_an_earlier_result(run, tmp_path):
    """`bench --json solo.pt` (a copy of a model) or --json text.txt ran every
    benchmark and replaced the file with its JSON, exit 0. Now refused before any."""
    model, text = tmp_path / "solo.pt", tmp_path / "text.txt"
    shutil.copy(run / "R" / "best.pt", model)
    shutil.copy(run / "text.txt", text)
    for path in (model, text):
        before = path.read_bytes()
        res = txl(*BENCH, "--json", path)
        assert one_line(res, 2) == error("bench", (
            f"--json {path} exists and is neither an earlier bench result nor an "
            "empty file (the only files --json replaces); give a new file name, or "
            "move it away"))
        assert res.stdout == "" and path.read_bytes() == before


def test_bench_json_still_takes_an_earlier_result_or_an_empty_file(tmp_path):
    """What --json may replace passes its checks (the memory check refuses next)."""
    earlier = {k: {} for k in ("device", "torch", "train", "eval", "memory_flatness")}
    (tmp_path / "old.json").write_text(json.dumps(earlier))
    (tmp_path / "empty.json").write_text("")
    for name in ("old.json", "empty.json"):
        res = txl(*BENCH, *HUGE, "--json", tmp_path / name)
        assert one_line(res, 2).startswith(error("bench", "training (--batch "))


# -- 2. a name ending in '/' -----------------------------------------------------------

def test_an_output_ending_in_a_slash_is_refused_before_any_work(run, tmp_path):
    """`train --out models/` wrote a file 'models', bench --json res/ one 'res',
    data offline --out x/ one 'x' and --deps-out deps/ 'deps' ('written to deps/'),
    each exit 0."""
    text = run / "text.txt"
    cases = [(["train", *tiny(text, "r"), "--out", "models/"], "--out models/"),
             ([*BENCH, "--json", "res/"], "--json res/"),
             (["data", "offline", "--out", "x/"], "--out x/"),
             (["data", "offline", "--out", "y.txt", "--deps-out", "deps/"],
              "--deps-out deps/")]
    for argv, named in cases:
        res = txl(*argv, cwd=tmp_path)
        assert one_line(res, 2) == error(" ".join(argv[:2]) if argv[0] == "data"
                                         else argv[0],
                                         f"{named} names a folder; give a file name")
        assert os.listdir(tmp_path) == [], argv


def test_an_input_file_named_with_a_slash_is_refused_alike(run):
    """`train --path text.txt/` and `data text8 --path text.txt/` read text.txt,
    while `data stats text.txt/` and `evaluate --path text.txt/` said 'cannot read
    text.txt/: no such file'. Now one line for each, before any work."""
    why = "text.txt is a file, not a directory; drop the trailing '/'"
    cases = [(["train", *tiny("text.txt/", "r2")], f"--path text.txt/: {why}"),
             (["data", "stats", "text.txt/"], f"text.txt/: {why}"),
             (["evaluate", "R", "--path", "text.txt/"], f"--path text.txt/: {why}"),
             (["data", "text8", "--path", "text.txt/"], f"--path text.txt/: {why}"),
             (["data", "offline", "--out", "text.txt/"], f"--out text.txt/: {why}")]
    for argv, line in cases:
        cmd = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
        assert one_line(txl(*argv, cwd=run), 2) == error(cmd, line)
    assert not (run / "r2").exists()


# -- 3. torch's compile cache folder ---------------------------------------------------

def test_a_compile_cache_that_cannot_be_made_is_one_line(run, tmp_path, chattr):
    """torch makes its compile cache folder as Adam first imports torch._dynamo:
    TORCHINDUCTOR_CACHE_DIR=/dev/null was a 49-line traceback from bench, and in
    train '/dev/null: File exists; no checkpoint was written yet', exit 1 each, not
    naming the variable. Now one line naming it (or TMPDIR), exit 2."""
    env = {k: v for k, v in ENV.items()
           if k not in ("TORCHINDUCTOR_CACHE_DIR", "TMPDIR", "TEMP", "TMP")}
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    chattr(frozen, "i")
    (tmp_path / "loop").symlink_to("loop")
    tmpd = tmp_path / "tmpd"
    tmpd.mkdir()
    (tmpd / f"torchinductor_{getpass.getuser()}").write_text("")
    train = ["train", *tiny(run / "text.txt", tmp_path / "r")]
    not_dir = "it is not a directory; give another folder"
    cases = [(BENCH, {"TORCHINDUCTOR_CACHE_DIR": "/dev/null"},
              f"TORCHINDUCTOR_CACHE_DIR='/dev/null' in the environment (torch's "
              f"compile cache): {not_dir}"),
             (train, {"TORCHINDUCTOR_CACHE_DIR": "/dev/null"},
              f"TORCHINDUCTOR_CACHE_DIR='/dev/null' in the environment (torch's "
              f"compile cache): {not_dir}"),
             (BENCH, {"TORCHINDUCTOR_CACHE_DIR": f"{frozen}/c"},
              f"TORCHINDUCTOR_CACHE_DIR='{frozen}/c' in the environment (torch's "
              f"compile cache): cannot make {frozen}/c (Operation not permitted); "
              "give another folder"),
             (BENCH, {"TORCHINDUCTOR_CACHE_DIR": f"{tmp_path}/loop"},
              f"TORCHINDUCTOR_CACHE_DIR='{tmp_path}/loop' in the environment (torch's "
              "compile cache): it is a symbolic link that leads to no folder; give "
              "another folder"),
             (train, {"TMPDIR": str(tmpd)},
              f"TMPDIR='{tmpd}' in the environment puts torch's compile cache at "
              f"{tmpd}/torchinductor_{getpass.getuser()}: {not_dir}, or set "
              "TORCHINDUCTOR_CACHE_DIR to one")]
    for argv, more, line in cases:
        res = txl_env({**env, **more}, *argv)
        assert one_line(res, 2) == error(argv[0], line)
        assert res.stdout == "" and not (tmp_path / "r").exists()
    assert os.listdir(frozen) == []


# -- 4. an append-only folder ----------------------------------------------------------

def test_an_append_only_folder_is_refused_and_left_empty(tmp_path, chattr):
    """`chattr +a ia`: data offline --out ia/n.txt and bench --json ia/b.json were
    refused, but each left its probe file (.probe-XXXXXXXX) there, which cannot be
    removed; TXL_MINI_CACHE=ia/c was refused ('cannot make ia/c') though a folder
    can be made there, and left ia/c."""
    ia = tmp_path / "ia"
    ia.mkdir()
    chattr(ia, "a")
    why = (f"cannot write to {ia}: it is append-only (chattr +a): a file written "
           "there cannot be renamed into place")
    for argv, named in ((["data", "offline", "--out", ia / "n.txt"], "--out"),
                        ([*BENCH, "--json", ia / "b.json"], "--json")):
        res = txl(*argv)
        cmd = "data offline" if argv[0] == "data" else "bench"
        assert one_line(res, 2) == error(cmd, f"{named} {argv[-1]}: {why}")
        assert os.listdir(ia) == []
    res = txl_env({**ENV, "TXL_MINI_CACHE": str(ia / "c")}, "data", "text8",
                  "--path", tmp_path / "no.zip")
    assert "no such file" in one_line(res, 2) and os.listdir(ia) == []


# -- 5. --resume of a symbolic link loop -----------------------------------------------

def test_resume_of_a_link_loop_says_so(tmp_path):
    """`train --resume lp1` (ln -s lp1 lp1) said 'no config.json there; is it a run
    directory...?', where evaluate lp1 and --run-dir lp1 name the loop."""
    os.symlink("lp1", tmp_path / "lp1")
    res = txl("train", "--resume", "lp1", cwd=tmp_path)
    assert one_line(res, 2) == error(
        "train", "--resume lp1 is a symbolic link loop; give a run directory")


# -- 6. --overwrite and a FIFO where the run wrote its --out ---------------------------

def test_overwrite_keeps_a_fifo_named_like_the_recorded_out(run, tmp_path):
    """A FIFO made where the run wrote --out fo/model.pt (its config.json records it)
    was removed by --overwrite without a word, as the run's own file; only a folder
    there was someone else's. Now anything but a regular file is."""
    fo = tmp_path / "fo"
    shutil.copytree(run / "R", fo)
    (fo / "model.pt").unlink()
    os.mkfifo(fo / "model.pt")
    res = txl("train", *tiny(run / "text.txt", fo), "--overwrite")
    assert one_line(res, 2) == error(
        "train", f"--run-dir {fo} is not a run directory of python -m txl_mini train "
        "(it holds model.pt); give a new or empty directory")
    assert (fo / "model.pt").is_fifo() and (fo / "last.pt").is_file()
