"""Issue 31, sixth probe: the run directory and its files (the findings of fix-31q).

Each test runs `python -m txl_mini` in a subprocess, as a user would.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from cli_text import words
from test_cli_faults import ENV, one_line, small_disk, tiny, txl  # noqa: F401 (a fixture)

from txl_mini.checkpoint import read_checkpoint

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


def test_an_interrupted_final_validation_writes_no_out(tmp_path):
    """Finding 3: SIGINT during the last step's validation printed 'saved r/last.pt
    at step 3/3; continue with --resume r', exit 130, yet wrote --out (the model of a
    run not finished, and not said). Now --out is left to the resume, which
    validates and writes it."""
    text = tmp_path / "big.txt"
    text.write_text(words(2_000_000))  # a validation of 100,000 chars: seconds
    r, out = tmp_path / "fv", tmp_path / "fv.pt"
    argv = [*tiny(str(text), r, steps=3), "--eval-chars", "100000", "--out", str(out)]
    argv.remove("--quiet")  # the bar says 'validating'
    err = tmp_path / "err.txt"
    with open(err, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "train", *argv],
                                env=ENV, stdout=subprocess.DEVNULL, stderr=f,
                                preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                 signal.SIG_DFL))
        t0 = time.time()
        while "validating" not in err.read_text(errors="replace"):
            assert proc.poll() is None and time.time() - t0 < 240, err.read_text()
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    assert err.read_text().splitlines()[-1] == (
        f"SIGINT: saved {r}/last.pt at step 3/3; continue with --resume {r}")
    assert not out.exists()
    res = txl("train", "--resume", r)
    assert res.returncode == 0 and f"and {out}" in res.stdout, res.stderr
    assert read_checkpoint(out)["meta"]["steps"] == 3


@pytest.mark.parametrize("damage", ["truncated", "code", "weights"])
def test_a_corrupt_last_pt_on_resume_is_bad_input(paused, tmp_path, damage):
    """Finding 4: a damaged last.pt on --resume exited 1 (evaluate: 2 for the same
    file); the README says 2 for a file that is not a checkpoint. The line is
    unchanged, but for the way out it now ends with (issue 31, probe 19)."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    last = r / "last.pt"
    if damage == "truncated":
        data = last.read_bytes()
        last.write_bytes(data[:len(data) // 2])
        why = (f"truncated or corrupt ({len(data) // 2:,} bytes; cannot read the "
               "archive)")
    elif damage == "code":  # an object whose unpickling would run code
        torch.save({"x": argparse_namespace()}, last)
        why = ("holds objects other than tensors and plain data; refusing to unpickle "
               "it (weights_only=True)")
    else:  # a weight of another shape than its config's
        ckpt = torch.load(last, weights_only=True)
        ckpt["state_dict"]["embed.weight"] = torch.zeros(1)
        torch.save(ckpt, last)
        why = ("weights do not match the stored config: embed.weight is (1,) in the "
               "file, (27, 16) for the config")
    res = txl("train", "--resume", r)  # and the way out (tests/test_cli_probe19p.py)
    assert one_line(res, 2) == (f"{PROG}: error: {last}: {why}; put back a good copy, "
                                f"or start the run again with --run-dir {r} "
                                "--overwrite and its options")


def argparse_namespace():
    import argparse

    return argparse.Namespace(a=1)


def pages(path) -> int:
    """The 4 KiB pages a file takes on a tmpfs."""
    return -(-os.path.getsize(path) // 4096)


def test_a_full_disk_after_best_pt_says_it_was_written(small_disk, text,  # noqa: F811
                                                       tmp_path):
    """Finding 5: best.pt written, then last.pt did not fit: the line said 'no
    checkpoint was written yet'. Now it names best.pt."""
    ref = tmp_path / "ref"  # the same run on a roomy disk: the sizes of its files
    assert txl("train", *tiny(text, ref)).returncode == 0
    fits = sum(pages(ref / n) for n in ("config.json", "metrics.jsonl", "best.pt"))
    assert pages(ref / "last.pt") > 2  # cannot fit in what is left
    r = small_disk(4 * (fits + 2)) / "r"  # + the lock's page, + one
    res = txl("train", *tiny(text, r))
    assert one_line(res, 1) == (
        f"{PROG}: error: cannot write {r}/last.pt: No space left on device; no "
        f"last.pt was written yet, only {r}/best.pt (--resume {r} starts it again)")
    assert sorted(os.listdir(r)) == ["best.pt", "config.json", "metrics.jsonl"]
