"""Issue 31, sixth probe: the run directory and its files (the findings of fix-31q).

Each test runs `python -m txl_mini` in a subprocess, as a user would.
"""

import os

import pytest
import torch
from test_cli_faults import ENV, one_line, small_disk, tiny, txl  # noqa: F401 (a fixture)

PROG = "python -m txl_mini train"


def snapshot(folder) -> dict:
    """Every file of `folder` and its bytes."""
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}


@pytest.mark.parametrize("name", ["last.pt", "best.pt", "metrics.jsonl", "curves.png"])
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_a_folder_of_foreign_files_named_like_a_runs_is_kept(tmp_path, text, name,
                                                            overwrite):
    """Finding 1: a folder holding someone's last.pt (or best.pt, metrics.jsonl,
    curves.png) and no config.json of ours was taken for a run: 'already exists; pass
    --resume ... or --overwrite', and --overwrite replaced the file, exit 0. Now it
    is refused as a lone foreign config.json is, without suggesting --overwrite."""
    d = tmp_path / "hf9"
    d.mkdir()
    if name.endswith(".pt"):
        torch.save({"model": {"w": torch.zeros(3)}, "epoch": 99}, d / name)
    else:
        (d / name).write_bytes(b"mine\n")
    before = snapshot(d)
    res = txl("train", *tiny(text, d), *overwrite)
    assert one_line(res, 2) == (
        f"{PROG}: error: --run-dir {d} is not a run directory of python -m txl_mini "
        f"train (it holds {name}); give a new or empty directory")
    assert snapshot(d) == before


def test_a_run_of_ours_is_still_overwritten(tmp_path, text):
    """Finding 1's fix keeps --overwrite for a run this tool wrote, and for one that
    stopped before its first checkpoint (config.json, metrics.jsonl, no last.pt)."""
    d = tmp_path / "r"
    assert txl("train", *tiny(text, d)).returncode == 0
    (d / "last.pt").unlink()
    (d / "curves.png").unlink()
    res = txl("train", *tiny(text, d), "--overwrite")
    assert res.returncode == 0 and "trained 2 steps" in res.stdout, res.stderr


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_out_is_not_the_training_text(tmp_path, text, how):
    """Finding 2: `train --path cc.txt --out cc.txt --overwrite` replaced the corpus
    with a checkpoint, exit 0. Now it is refused before any work (also through a link
    to it), as --deps-out naming --out is."""
    out = tmp_path / "cc.txt"
    if how == "same":
        out = text
    elif how == "symlink":
        os.symlink(text, out)
    else:
        os.link(text, out)
    before = open(text, "rb").read()
    res = txl("train", *tiny(text, tmp_path / "co"), "--out", out, "--overwrite")
    assert one_line(res, 2) == (
        f"{PROG}: error: --out {out} is the training text --path {text}; give the "
        "model a file of its own")
    assert open(text, "rb").read() == before and not (tmp_path / "co").exists()
