"""A fifth probe of the command lines, part c: a run whose last.pt was deleted, the
text evaluate reads, the memory refusal's advice, and a finished run's --out written
under the run's lock (subprocesses; each failed before its fix)."""
import json
import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini train"


def test_a_run_whose_last_pt_was_deleted_is_not_started_again(tmp_path, text):
    """'train --resume r' of a run whose last.pt was deleted by hand started again
    from step 0 (exit 0) and replaced its best.pt. Now one line, exit 2, naming what
    is missing and the ways on; best.pt and metrics.jsonl are left as they were."""
    r = tmp_path / "r"
    assert txl("train", *tiny(text, r, steps=3), "--pause-at", "2").returncode == 0
    assert txl("train", "--resume", r).returncode == 0  # finished: step 3 of 3
    (r / "last.pt").unlink()
    before = {n: (r / n).read_bytes() for n in ("best.pt", "metrics.jsonl")}
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (
        f"{PROG}: error: {r}/last.pt is missing, but the run wrote it at step 3 "
        "(config.json records it); put it back to continue, or start the run again "
        f"with --run-dir {r} --overwrite and its options")
    assert res.stdout == "" and not (r / "last.pt").exists()
    assert {n: (r / n).read_bytes() for n in before} == before
    r2 = tmp_path / "r2"  # paused: the same
    assert txl("train", *tiny(text, r2, steps=3), "--pause-at", "1").returncode == 0
    (r2 / "last.pt").unlink()
    assert "wrote it at step 1" in one_line(txl("train", "--resume", r2), 2)


def test_a_run_stopped_before_its_first_checkpoint_still_starts_again(tmp_path,
                                                                      text):
    """What the refusal above must not catch: a run that never wrote a last.pt (here
    its config.json as such a run leaves it) starts again from step 0."""
    r = tmp_path / "r"
    assert txl("train", *tiny(text, r)).returncode == 0
    config = json.loads((r / "config.json").read_text())
    for name in ("last.pt", "best.pt", "metrics.jsonl"):
        (r / name).unlink()
    config.pop("saved", None)  # as a run that never saved leaves it
    (r / "config.json").write_text(json.dumps(config, indent=1))
    res = txl("train", "--resume", r)
    assert res.returncode == 0 and "resuming at step 0" in res.stdout, res.stderr
    assert json.loads((r / "config.json").read_text())["saved"] == 2


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("ev")
    (d / "t.txt").write_text(("the cat sat on a mat while seven dogs ran far " * 80))
    res = txl("train", *tiny(str(d / "t.txt"), d / "r"))
    assert res.returncode == 0, res.stderr
    (d / "other.txt").write_text("a dog ran home and back again " * 120)
    res = txl("train", *tiny(str(d / "t.txt"), d / "v"), "--vanilla")
    assert res.returncode == 0, res.stderr
    return d


def test_evaluate_names_the_text_it_reads(trained):
    """'evaluate r --path other.txt' said 'corpus: offline (valid, first N
    characters)', and --json had no path: which text gave the bpc was not said."""
    d = trained
    res = txl("evaluate", d / "r", "--path", d / "other.txt", "--quiet")
    assert res.returncode == 0, res.stderr
    assert f"; corpus: offline ({d}/other.txt, valid, first " in res.stdout
    res = txl("evaluate", d / "r", "--path", d / "other.txt", "--json")
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["path"] == f"{d}/other.txt" and got["corpus"] == "offline"
    res = txl("evaluate", d / "r", "--json")  # the text it trained on, recorded
    assert res.returncode == 0 and json.loads(res.stdout)["path"] == f"{d}/t.txt"


def memory_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def test_the_memory_refusal_names_the_layers(tmp_path, text):
    """'train --preset tiny --n-layer 100000' (with a batch too big for it) said
    'lower --batch-size, --seg-len or --mem-len', though the layers grow every part
    as much; '--n-layer 100000' of the book's preset, whose weights alone need 293
    GiB, was told to lower '..., --seg-len or --mem-len' too, which cannot help."""
    if not 8 < memory_gib() < 256:
        pytest.skip("the estimates below are sized for 8 to 256 GiB of memory")
    res = txl("train", *tiny(text, tmp_path / "r"), "--n-layer", "100000",
              "--batch-size", "4096")
    assert one_line(res, 2).endswith(
        "; lower --batch-size, --seg-len, --mem-len or --n-layer")
    res = txl("train", "--path", text, "--run-dir", tmp_path / "r", "--n-layer",
              "100000")
    line = one_line(res, 2)
    assert "weights + Adam 293.0 GiB" in line and line.endswith(
        "; lower the model's size (--d-model, --d-inner, --n-layer, --n-head or "
        "--d-head)"), line
    assert not (tmp_path / "r").exists()


def test_a_finished_runs_out_is_written_under_the_lock(tmp_path, text):
    """'train --resume r' of a finished run whose --out is missing wrote --out before
    it took r's lock: with another train process holding r, it wrote anyway (exit
    0). Now it is refused as any run directory in use is, and writes nothing."""
    r, out = tmp_path / "r", tmp_path / "m.pt"
    assert txl("train", *tiny(text, r), "--out", out).returncode == 0
    out.unlink()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom txl_mini.cli.lock import "
         "RunLock\nlock = RunLock(sys.argv[1])\nprint('held', flush=True)\n"
         "time.sleep(120)", str(r)], env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        res = txl("train", "--resume", r)
        assert one_line(res, 2) == (
            f"{PROG}: error: {r} is in use by another train process (pid "
            f"{holder.pid}); wait for it or stop it first")
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    res = txl("train", "--resume", r)  # the lock free: written as before
    assert one_line(res, 0) == (f"{PROG}: {r} is finished: step 2 of 2; wrote {out} "
                                "from its last.pt")
    assert out.is_file()


def test_the_sliding_windows_estimate_is_bounded_by_the_text(trained):
    """'evaluate v --seg-len 150 --batch-size 10000000' (a vanilla checkpoint) on a
    valid split of 184 characters was refused as needing 10,913 GiB for 10,000,000
    windows at once, where the text has 33: the estimate now counts the windows the
    evaluation runs (the bpc is the same computation)."""
    d = trained
    res = txl("evaluate", d / "v", "--seg-len", "150", "--batch-size", "10000000",
              "--json")
    assert res.returncode == 0, res.stderr
    wide = json.loads(res.stdout)
    res = txl("evaluate", d / "v", "--seg-len", "150", "--batch-size", "7", "--json")
    assert res.returncode == 0, res.stderr
    assert wide["chars"] == 184 and wide["n_tokens"] == 183
    assert wide["bpc"] == pytest.approx(json.loads(res.stdout)["bpc"], rel=1e-6)
