"""Probe 22's findings. A run directory named through '..' after a folder that is
not there (`--run-dir a/tmp/../../b`, no a/tmp): makedirs made a/tmp to get
through it and left it inside run a for ever, whose --overwrite then refused it
('it holds tmp')."""

from test_cli_faults import one_line, tiny, txl

PROG = "python -m txl_mini"


def test_a_dot_dot_after_a_missing_folder_is_refused_and_makes_nothing(tmp_path,
                                                                        text):
    assert txl("train", *tiny(text, "a"), cwd=tmp_path).returncode == 0
    before = sorted(p.name for p in (tmp_path / "a").iterdir())
    res = txl("train", *tiny(text, "a/tmp/../../b"), cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG} train: error: --run-dir: cannot write to a/tmp/../../b: a/tmp is "
        "not a folder, so the '..' after it leads nowhere; give the path without it")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == before
    assert not (tmp_path / "b").exists()
    again = txl("train", *tiny(text, "a"), "--overwrite", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_a_dot_dot_after_a_folder_that_is_there_still_works(tmp_path, text):
    (tmp_path / "a").mkdir()
    res = txl("train", *tiny(text, "a/../b"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "b" / "last.pt").is_file()
    assert list((tmp_path / "a").iterdir()) == []


def test_a_dot_dot_after_a_symbolic_link_is_refused_and_makes_nothing(tmp_path,
                                                                       text):
    """`ls2/../x`: the kernel reads x beside ls2's target, normpath read ./x, and
    every check used normpath's: a false 'x is a file', folders made beside the
    target and left there, then 'File exists' for the run meant."""
    (tmp_path / "far" / "sub").mkdir(parents=True)
    here = tmp_path / "here"
    here.mkdir()
    (here / "ls2").symlink_to("../far/sub")
    (here / "f").touch()
    for run_dir in ("ls2/../f/x", "ls2/../newp/q"):
        res = txl("train", *tiny(text, run_dir), cwd=here)
        assert one_line(res, 2) == (
            f"{PROG} train: error: --run-dir: cannot write to {run_dir}: ls2 is a "
            "symbolic link, so the '..' after it is its target's parent, "
            f"{tmp_path / 'far'}; give the path without it")
    assert sorted(p.name for p in (tmp_path / "far").iterdir()) == ["sub"]
    assert sorted(p.name for p in here.iterdir()) == ["f", "ls2"]
    res = txl("train", *tiny(text, "ls2/new"), cwd=here)  # no '..': as before
    assert res.returncode == 0 and (tmp_path / "far/sub/new/last.pt").is_file()
