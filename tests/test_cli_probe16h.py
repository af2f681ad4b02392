"""Issue 31, a hostile probe: train --out F and bench --json F renamed their result
over a file that appeared at F while they ran (someone else's, made after the
start-time checks, which refuse one that is there), silently, exit 0."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, tiny

PROG = "python -m txl_mini"
THEIRS = b"someone else's file\n"


def _appears_after_first_line(argv, out):
    """Run `python -m txl_mini ARGV`; as its first line of output arrives (all its
    checks passed), someone writes `out`. Returns (exit status, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", *map(str, argv)],
                            env=dict(ENV, PYTHONUNBUFFERED="1"), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.readline()
        out.write_bytes(THEIRS)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert first, err
    return proc.returncode, err


def test_train_keeps_an_out_file_that_appeared_while_it_trained(tmp_path, text):
    out = tmp_path / "model.pt"
    code, err = _appears_after_first_line(
        ["train", *tiny(text, tmp_path / "r", steps=4), "--out", out], out)
    assert out.read_bytes() == THEIRS
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith(f"{PROG} train: error: {out}: a file appeared there while "
                          "we ran; it is left as it is"), err
    assert f"; the model is {tmp_path / 'r'}/last.pt; move that file away" in err, err
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_bench_keeps_a_json_file_that_appeared_while_it_ran(tmp_path):
    out = tmp_path / "res.json"
    code, err = _appears_after_first_line(
        ["bench", "--quick", "--device", "cpu", "--rounds", "1", "--steps", "1",
         "--max-attn-len", "128", "--no-paper-shape", "--long-segments", "20",
         "--quiet", "--json", out], out)
    assert out.read_bytes() == THEIRS
    assert code == 1 and f"cannot write {out}: a file appeared there" in err, err
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@pytest.mark.parametrize("before", [None, b"", b"old"])
def test_an_atomic_write_replaces_only_what_was_checked(tmp_path, before):
    """The library's side: `was` (what the checks found) must still be there."""
    from txl_mini.files import atomic_path, snapshot  # (new: not on old trees)

    path = tmp_path / "f"
    if before is not None:
        path.write_bytes(before)
    was = snapshot(path)
    with pytest.raises(FileExistsError, match="left as it is"):
        with atomic_path(path, was) as tmp:
            open(tmp, "wb").write(b"ours")
            path.write_bytes(b"theirs, longer")  # appeared, or rewritten
    assert path.read_bytes() == b"theirs, longer"
    assert os.listdir(tmp_path) == ["f"]
    with atomic_path(path, snapshot(path)) as tmp:  # unchanged: replaced
        open(tmp, "wb").write(b"ours")
    assert path.read_bytes() == b"ours"
