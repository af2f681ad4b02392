"""Paths on the command line and the run directory's own files, as a hostile user
gives them (issue 31, probe 2): symlinks, loops, files where folders belong,
relative paths, read-only places. Subprocesses; each test failed before its fix."""

import os

from test_cli_faults import py, small_disk, tiny  # noqa: F401 (small_disk: a fixture)


def train(*argv, **kw):
    return py("-m", "txl_mini", "train", *argv, **kw)


def last_line(res) -> str:
    return res.stderr.strip().splitlines()[-1]


def test_a_symlinked_lock_is_refused_and_its_target_kept(tmp_path, text):
    """Finding 1: train opened DIR/.lock through the link, emptied the file it points
    to and wrote its pid there (exit 0; the link then removed)."""
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    d = tmp_path / "lk"
    d.mkdir()
    (d / ".lock").symlink_to(precious)
    res = train(*tiny(text, d))
    assert res.returncode == 2, res.stderr
    assert last_line(res) == (f"python -m txl_mini train: error: {d}/.lock is a "
                              "symbolic link, not train's lock file; remove it")
    assert precious.read_text() == "keep me\n" and (d / ".lock").is_symlink()
    assert sorted(os.listdir(d)) == [".lock"]


def test_a_refused_run_removes_every_folder_it_made(tmp_path, text):
    """Finding 10: only the last level made for --run-dir or --out was recorded, so a
    run refused before training left deep/a (and nd/) empty behind."""
    res = train(*tiny(text, tmp_path / "deep" / "a" / "b"), "--batch-size", "5000")
    assert res.returncode == 2 and "lower --batch-size" in res.stderr
    res = train(*tiny(text, tmp_path / "r"), "--out", str(tmp_path / "nd/x/m.pt"),
                "--batch-size", "5000")
    assert res.returncode == 2 and "lower --batch-size" in res.stderr
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]
