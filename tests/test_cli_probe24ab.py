"""Probe 24's path and data findings (issue 31, fix-31ab): bench --json now expands
'~' as every path option does; data's and the top level's misplaced options are
named; pasted proposals are quoted for a shell; kernel_path's line for a link
before '..' tells the truth; --out=-- and --resume=-- say what else to give."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, txl

PROG = "python -m txl_mini"
QUICK = ("bench", "--quick", "--rounds", "1", "--steps", "1", "--max-attn-len",
         "128", "--long-segments", "20", "--quiet")


def in_home(tmp_path, *argv):
    """txl ARGV run in tmp_path/cwd, with HOME=tmp_path/home."""
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "cwd").mkdir(exist_ok=True)
    env = dict(ENV, HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=env,
                          cwd=tmp_path / "cwd", text=True, capture_output=True,
                          timeout=300)


def test_bench_json_expands_the_home_and_says_where_it_went(tmp_path):
    res = in_home(tmp_path, *QUICK, "--json", "~/j.json")
    assert res.returncode == 0, res.stderr
    home = tmp_path / "home"
    assert (home / "j.json").is_file() and not (tmp_path / "cwd" / "~").exists()
    assert res.stdout.splitlines()[-1] == f"wrote the results as JSON to {home}/j.json"


def test_bench_json_checks_and_writes_the_same_expanded_path(tmp_path):
    (tmp_path / "home" / "hx").mkdir(parents=True)
    res = in_home(tmp_path, *QUICK, "--json", "~/hx/../j3.json")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "home" / "j3.json").is_file()
    assert os.listdir(tmp_path / "cwd") == []


def test_bench_json_refuses_a_home_of_no_user(tmp_path):
    res = in_home(tmp_path, *QUICK, "--json", "~nouser/x.json")
    line = one_line(res, 2)
    assert line == (f"{PROG} bench: error: --json ~nouser/x.json: ~nouser names the "
                    "home of user 'nouser', and there is no such user; give another "
                    "path (./~nouser/x.json for a folder so named)"), line
    assert os.listdir(tmp_path / "cwd") == []


AFTER = "and options go after the command word: type"
DATA = [
    ("--quiet text8 --path o.txt", f"--quiet is an option of data text8, {AFTER} "
     "data text8 --quiet --path o.txt"),
    ("--overwrite offline --out o.txt", f"--overwrite is an option of data offline, "
     f"{AFTER} data offline --overwrite --out o.txt"),
    ("--chars 5 offline --out o.txt", f"--chars is an option of data offline, "
     f"{AFTER} data offline --chars 5 --out o.txt"),
    ("--path x", f"--path is an option of data text8, {AFTER} data text8 --path x"),
    ("--out=o.txt", f"--out=o.txt: --out is an option of data offline, {AFTER} "
     "data offline --out=o.txt"),
    # the proposal starts with data (fix-31ak): `stats f` pasted is no command
    ("--stat f", "--stat: stats is a command, not an option: type data stats f"),
    ("--stats=f", "--stats=f: stats is a command, not an option: type data stats f"),
    ("--offline=yes", "--offline=yes: offline is a command, not an option (it takes "
     "no value): type data offline"),
    ("--Offline", "--Offline: offline is a command, not an option: type data "
     "offline"),
    ("--stats-f", "--stats-f: stats is a command, not an option: type data stats"),
    ("--verbose", "--verbose is no option of data nor of its commands; which data? "
     "(text8, stats, offline; --help lists them)"),
    ("-- stats f", "'--' before the command word: type data stats f (a '--' goes "
     "after it, before words that are not options)"),
    ("--quiet stats f", "--quiet is an option of data text8, not of data stats"),
]


@pytest.mark.parametrize("argv,said", DATA)
def test_data_names_an_option_typed_before_its_command(tmp_path, argv, said):
    res = txl("data", *argv.split(), cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} data: error: {said}"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv,said", [
    ("--quiet train", f"--quiet is an option of train, {AFTER} train --quiet"),
    ("--device cpu evaluate x", f"--device is an option of evaluate, {AFTER} "
     "evaluate --device cpu x"),
    ("--quiet data", f"--quiet is an option of data text8, {AFTER} data text8 "
     "--quiet"),
])
def test_the_top_level_says_options_go_after_the_command(tmp_path, argv, said):
    res = txl(*argv.split(), cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG}: error: {said}"


def test_the_remedy_runs(tmp_path):
    """What `data --chars 5 offline --out o.txt` proposes does what was meant."""
    res = txl("data", "--chars", "1000", "offline", "--out", "o.txt", cwd=tmp_path)
    line = one_line(res, 2).rpartition(": type ")[2]
    assert line == "data offline --chars 1000 --out o.txt"
    res = txl(*line.split(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len((tmp_path / "o.txt").read_text()) == 1000


def pasted(proposal: str) -> list[str]:
    """The words bash reads from `proposal` pasted as typed."""
    res = subprocess.run(["bash", "-c", "printf '%s\\0' " + proposal],
                         capture_output=True, text=True, check=True)
    return res.stdout.split("\0")[:-1]


@pytest.mark.parametrize("argv,meant", [
    (("train", "—steps= −1"), "--steps= -1"),
    (("train", "—lr= 1e−3"), "--lr= 1e-3"),
    (("sample", "ckpt", "—temperature=\t−1"), "--temperature=\t-1"),
    (("sample", "ckpt", "—prompt=the quick"), "--prompt=the quick"),
    (("train", "—run-dir=my runs/a"), "--run-dir=my runs/a"),
    (("train", "—path=it's"), "--path=it's"),
    (("sample", "ckpt", "—prompt=hello "), "--prompt=hello "),
    (("train", "—lr=1e−3"), "--lr=1e-3"),
])
def test_a_proposal_pastes_back_as_the_word_meant(tmp_path, argv, meant):
    line = one_line(txl(*argv, cwd=tmp_path), 2)
    proposal = line.rpartition("; type ")[2]
    assert pasted(proposal) == [meant], line


def links(tmp_path):
    """cwd/link -> real (a sibling), dl -> nowhere/deep, fl -> f (a file),
    fa -> far/t (its parent far, not cwd), lp -> lp (a loop)."""
    cwd = tmp_path / "cwd"
    for d in ("real", "far/t"):
        (cwd / d).mkdir(parents=True)
    (cwd / "f").touch()
    for name, target in (("link", "real"), ("dl", "nowhere/deep"), ("fl", "f"),
                         ("fa", "far/t"), ("lp", "lp")):
        (cwd / name).symlink_to(target)
    return cwd


def test_a_link_to_a_sibling_before_dots_is_the_folder_meant(tmp_path):
    cwd = links(tmp_path)
    res = txl("data", "offline", "--chars", "1000", "--out", "link/../o.txt", cwd=cwd)
    assert res.returncode == 0, res.stderr
    assert len((cwd / "o.txt").read_text()) == 1000


@pytest.mark.parametrize("link,why", [
    ("dl", "dl is a symbolic link to nowhere/deep, which is not there, so the '..' "
     "after it leads nowhere"),
    ("fl", "fl is a symbolic link to f, which is a file, so the '..' after it leads "
     "nowhere"),
    ("lp", "lp is a symbolic link loop, so the '..' after it leads nowhere"),
    ("fa", "fa is a symbolic link, so the '..' after it is its target's parent, "
     "{cwd}/far"),
])
def test_a_link_before_dots_is_said_truly(tmp_path, link, why):
    cwd = links(tmp_path)
    before = sorted(os.listdir(cwd))
    res = txl("data", "offline", "--chars", "1000", "--out", f"{link}/../o.txt",
              cwd=cwd)
    assert one_line(res, 2) == (
        f"{PROG} data offline: error: --out: cannot write to {link}/../o.txt: "
        f"{why.format(cwd=cwd)}; give the path without it")
    assert sorted(os.listdir(cwd)) == before


SEP = "'--' is not a value (it only ends the options); give"


@pytest.mark.parametrize("argv,tail", [
    (("--out=--",), "--out a value, or leave it out and give --run-dir or --resume"),
    (("--resume=--",), "--resume a value, or leave it out and give --run-dir or "
     "--out"),
    (("--run-dir=--",), "--run-dir a value, or leave it out and give --out or "
     "--resume"),
    (("--run-dir", "r", "--out=--"), "--out a value or leave it out"),
    (("--out", "o.pt", "--resume=--"), "--resume a value or leave it out"),
])
def test_a_dashes_value_says_what_else_to_give(tmp_path, argv, tail):
    """Left out alone, train says 'give --run-dir DIR': the tail says so, only
    where none of the others is given."""
    res = txl("train", *argv, cwd=tmp_path)
    word = next(w for w in argv if w.endswith("=--"))
    assert one_line(res, 2) == f"{PROG} train: error: {word}: {SEP} {tail}"
    assert one_line(txl("train", cwd=tmp_path), 2).endswith("give --run-dir DIR "
                                                            "(where checkpoints "
                                                            "and metrics go)")
