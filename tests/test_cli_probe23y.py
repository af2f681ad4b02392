"""Probe 23's '..' findings (issue 31). A '..' is read by the kernel as the parent
of what is before it: after a symbolic link (even one step removed, `link/./../x`,
`link/sub/../../x`) that is beside the link's target, not where normpath (and every
check) looked; after a folder not there or a file it leads nowhere, and makedirs
made the missing one to get through and left it. The same refusal (folders.
kernel_path) now stands for every file or folder a command writes: train --run-dir
and --out, data offline --out/--deps-out, bench --json, data text8 --cache-dir and
TXL_MINI_CACHE; each refusal leaves nothing behind."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini"
NOWHERE = ("is not a folder, so the '..' after it leads nowhere; give the path "
           "without it")


def tree(root) -> list[str]:
    """`find .` as a sorted list: what a refusal must leave as it found it."""
    return sorted(os.path.relpath(os.path.join(d, n), root)
                  for d, ds, fs in os.walk(root) for n in ds + fs)


def linked(tmp_path):
    """here/link -> ../far/sub (far/sub/sub a folder), here/f a file; cwd here."""
    (tmp_path / "far" / "sub" / "sub").mkdir(parents=True)
    here = tmp_path / "here"
    here.mkdir()
    (here / "link").symlink_to("../far/sub")
    (here / "f").touch()
    return here


def via_link(tmp_path) -> str:
    return ("is a symbolic link, so the '..' after it is its target's parent, "
            f"{tmp_path / 'far'}; give the path without it")


@pytest.mark.parametrize("run_dir", ["link/./../x", "link//../y",
                                     "link/sub/../../w"])
def test_a_link_cancelled_one_step_removed_is_refused(tmp_path, text, run_dir):
    here = linked(tmp_path)
    before = tree(tmp_path)
    res = txl("train", *tiny(text, run_dir), cwd=here)
    assert one_line(res, 2) == (f"{PROG} train: error: --run-dir: cannot write to "
                                f"{run_dir}: link {via_link(tmp_path)}")
    assert tree(tmp_path) == before


def test_a_link_not_cancelled_stays_fine(tmp_path, text):
    here = linked(tmp_path)
    res = txl("train", *tiny(text, str(here / "link/sub/../b")), cwd=here)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "far/sub/b/last.pt").is_file()


@pytest.mark.parametrize("out, part, why", [
    ("link/../ny/o.pt", "link", None), ("link/./../ny/o.pt", "link", None),
    ("miss/../ny/o.pt", "miss", NOWHERE), ("f/../o4.pt", "f", NOWHERE)])
def test_train_out_through_a_dot_dot_is_refused(tmp_path, text, out, part, why):
    here = linked(tmp_path)
    before = tree(tmp_path)
    res = txl("train", *tiny(text, "r"), "--out", out, cwd=here)
    assert one_line(res, 2) == (f"{PROG} train: error: --out: cannot write to {out}: "
                                f"{part} {why or via_link(tmp_path)}")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("opt, out, part, why", [
    ("--out", "link/../o2/c.txt", "link", None),
    ("--out", "link/sub/../../o2/c.txt", "link", None),
    ("--out", "miss/../o3/c.txt", "miss", NOWHERE),
    ("--out", "f/../o4.txt", "f", NOWHERE),
    ("--deps-out", "nB2/f/../d.tsv", "nB2/f", NOWHERE)])
def test_data_offline_through_a_dot_dot_is_refused(tmp_path, opt, out, part, why):
    here = linked(tmp_path)
    (here / "nB2").mkdir()
    (here / "nB2" / "f").touch()
    before = tree(tmp_path)
    args = ["--out", "c.txt", "--deps-out", out] if opt == "--deps-out" else [
        "--out", out]
    res = txl("data", "offline", "--chars", "2000", *args, cwd=here)
    assert one_line(res, 2) == (f"{PROG} data offline: error: {opt}: cannot write "
                                f"to {out}: {part} {why or via_link(tmp_path)}")
    assert tree(tmp_path) == before


def test_data_offline_legitimate_dot_dots_still_work(tmp_path):
    here = linked(tmp_path)
    (here / "d").mkdir()
    for out in ("d/../a/c.txt", "../b.txt", str(here / "d/../e.txt"), "/../" + str(
            tmp_path / "g.txt").lstrip("/")):
        res = txl("data", "offline", "--chars", "2000", "--out", out,
                  "--deps-out", out + ".tsv", cwd=here)
        assert res.returncode == 0, res.stderr
        assert os.path.isfile(os.path.normpath(here / out)), out


BENCH = ["bench", "--quick", "--device", "cpu", "--rounds", "1", "--steps", "1",
         "--max-attn-len", "128", "--no-paper-shape", "--long-segments", "20",
         "--quiet", "--json"]


@pytest.mark.parametrize("out, part, why", [
    ("f/../j.json", "f", NOWHERE), ("miss/../j.json", "miss", NOWHERE),
    ("link/./../j.json", "link", None)])
def test_bench_json_through_a_dot_dot_is_refused(tmp_path, out, part, why):
    here = linked(tmp_path)
    before = tree(tmp_path)
    res = txl(*BENCH, out, cwd=here)
    assert one_line(res, 2) == (f"{PROG} bench: error: --json: cannot write to "
                                f"{out}: {part} {why or via_link(tmp_path)}")
    assert tree(tmp_path) == before


def test_bench_json_after_a_real_folder_still_works(tmp_path):
    here = linked(tmp_path)
    (here / "d").mkdir()
    res = txl(*BENCH, "d/../j/j.json", cwd=here)
    assert res.returncode == 0, res.stderr
    assert (here / "j" / "j.json").is_file()


def run(*argv, cwd, **env):
    return subprocess.run([sys.executable, "-m", "txl_mini", *argv], cwd=cwd,
                          env=dict(ENV, **env), text=True, capture_output=True,
                          timeout=300)


@pytest.mark.parametrize("cache, part", [("miss/../c", "miss"),
                                         ("a/b/../../c", "a/b"),
                                         ("link/./../c", "link")])
def test_data_text8_cache_dir_through_a_dot_dot_is_refused(tmp_path, cache, part):
    here = linked(tmp_path)
    before = tree(tmp_path)
    res = run("data", "text8", "--cache-dir", cache, "--quiet", cwd=here)
    why = via_link(tmp_path) if part == "link" else NOWHERE
    assert one_line(res, 2) == (f"{PROG} data text8: error: --cache-dir: cannot "
                                f"write to {cache}: {part} {why}")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("command", ["train", "data"])
def test_txl_mini_cache_through_a_dot_dot_is_refused(tmp_path, text, command):
    here = linked(tmp_path)
    before = tree(tmp_path)
    argv = (["train", "--corpus", "text8", "--preset", "tiny", "--run-dir", "r",
             "--steps", "1"] if command == "train" else ["data", "text8", "--quiet"])
    res = run(*argv, cwd=here, TXL_MINI_CACHE="m2/../c")
    prog = f"{PROG} train" if command == "train" else f"{PROG} data text8"
    assert one_line(res, 2) == (
        f"{prog}: error: TXL_MINI_CACHE='m2/../c' in the environment: "
        f"cannot write to m2/../c: m2 {NOWHERE}")
    assert tree(tmp_path) == before


def test_a_cache_after_a_real_folder_gets_past_the_check(tmp_path):
    """No network here: the download fails (or text8 is read), but not with the
    '..' refusal, for the option and the variable alike."""
    here = linked(tmp_path)
    (here / "d").mkdir()
    for argv, env in ((["--cache-dir", "d/../c"], {}), ([], {"TXL_MINI_CACHE":
                                                           "d/../c"})):
        res = run("data", "text8", "--quiet", *argv, cwd=here, **env)
        assert "'..'" not in res.stderr and "cannot write to" not in res.stderr, (
            res.stderr)
