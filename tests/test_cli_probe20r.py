"""Probe 20's option-parsing findings (fix-31r): a mistyped option or command got no
hint unless '_' stood for '-'; --no-progress was bench's alone."""

import pytest
from cli_text import words
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"


@pytest.mark.parametrize("argv, hint", [
    (["train", "--stpes", "5"], "--stpes 5 (did you mean --steps?)"),
    (["train", "--seg-lne", "5"], "--seg-lne 5 (did you mean --seg-len?)"),
    (["train", "--bach-size", "4"], "--bach-size 4 (did you mean --batch-size?)"),
    (["train", "--n-layers", "2"], "--n-layers 2 (did you mean --n-layer?)"),
    (["train", "--dmodel", "16"], "--dmodel 16 (did you mean --d-model?)"),
    (["train", "--Steps=3"], "--Steps=3 (did you mean --steps?)"),
    (["sample", "x.pt", "--temprature", "0.5"],
     "--temprature 0.5 (did you mean --temperature?)"),
    (["sample", "x.pt", "--topk", "4"], "--topk 4 (did you mean --top-k?)"),
    (["evaluate", "x.pt", "--chras", "4"], "--chras 4 (did you mean --chars?)"),
    (["data", "offline", "--dep-out", "x", "--out", "y"],
     "--dep-out x (did you mean --deps-out?)"),
    (["train", "--stpes", "5", "--mem_len", "4"],
     "--stpes 5 --mem_len 4 (did you mean --steps, --mem-len?)"),
    (["train", "--bogus", "4"], "--bogus 4 (see --help)"),  # nothing close
    (["bench", "--mem_len", "4"], "--mem_len 4 (see --help)"),  # bench has none
])
def test_a_near_miss_names_the_option_meant(tmp_path, argv, hint):
    res = txl(*argv, cwd=tmp_path)
    prog = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
    assert one_line(res, 2) == (f"{PROG} {prog}: error: unrecognized arguments: "
                                f"{hint}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, hint", [
    ("Train", "did you mean train?"), ("EVALUATE", "did you mean evaluate?"),
    ("evalute", "did you mean evaluate?"), ("sampel", "did you mean sample?"),
    ("bogus", "train, evaluate, sample, data, bench; --help lists them"),
])
def test_a_near_miss_names_the_command_meant(tmp_path, name, hint):
    res = txl(name, "--help", cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG}: error: unknown command {name!r} ({hint})"
    assert res.stdout == ""


def test_no_progress_is_quiet_in_every_command(paused, tmp_path):
    """bench's alias of --quiet; train, evaluate, sample and data text8 said
    'unrecognized arguments: --no-progress'."""
    (tmp_path / "t.txt").write_text(words(2000))
    run = ["train", "--preset", "tiny", "--corpus", "offline", "--path", "t.txt",
           "--steps", "2", "--warmup", "1", "--eval-chars", "60", "--threads", "1"]
    said = {}
    for quiet in ("--quiet", "--no-progress"):
        for argv in (run + ["--run-dir", quiet[2:]],
                     ["evaluate", paused, "--chars", "60"],
                     ["sample", paused, "--chars", "5", "--seed", "1"]):
            res = txl(*argv, "--threads", "1", quiet, cwd=tmp_path)
            assert res.returncode == 0, res.stderr
            said.setdefault(argv[0], []).append(res.stderr)
    assert all(a == b for a, b in said.values()), said
    assert said["sample"] == ["", ""]
    res = txl("data", "text8", "--path", "no-such.zip", "--no-progress", cwd=tmp_path)
    assert one_line(res, 2).startswith(f"{PROG} data text8: error: no such file: "
                                       "no-such.zip.")
