"""Probe 20's message findings (fix-31s): evaluate refused --same-length in the
sliding window as impossible, yet ran a same_length checkpoint's window there, and
had no --no-same-length; it told a Shaw checkpoint's --clamp-len there was no
relative position to clamp; train --resume RUN/last.pt said only 'no config.json
there'; a pasted --resume hint named another folder ('lit\\udcfe' printed as
'lit\\xfe', 'café' under PYTHONIOENCODING=ascii as 'caf\\xe9'); and a resumed run's
refusal named one of --tie-weights --no-tie-weights, then the other."""

import json
import os
import re
import shlex
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, txl

PROG = "python -m txl_mini"
RUN = ["--preset", "tiny", "--offline-chars", "20000", "--eval-chars", "200",
       "--warmup", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three runs of 2 steps (the tiny preset: L=8, M=8): plain, --same-length,
    --pos-enc shaw; and one of --mem-len 0."""
    top = tmp_path_factory.mktemp("runs")
    for name, extra in (("plain", []), ("sl", ["--same-length"]),
                        ("shaw", ["--pos-enc", "shaw"]), ("nomem", ["--mem-len", "0"])):
        res = txl("train", *RUN, "--steps", "2", *extra, "--run-dir", top / name)
        assert res.returncode == 0, res.stderr
    return top


def sliding(run, *argv):
    """evaluate --mode sliding --json's object (it must exit 0)."""
    res = txl("evaluate", run, "--mode", "sliding", "--chars", "600", "--threads", "1",
              "--json", *argv)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_sliding_honours_same_length_both_ways(runs):
    """The window a same_length checkpoint gets in the sliding window (each query its
    last mem_len keys), --same-length gives any checkpoint, --no-same-length takes
    away: with L=32 > M=8 the scores differ; with L=8 = M the window is all L."""
    sl, plain = sliding(runs / "sl", "--seg-len", "32"), sliding(
        runs / "plain", "--seg-len", "32", "--same-length")
    for got in (sl, plain):
        assert (got["same_length"], got["window"], got["mem_len"]) == (True, 8, 0)
    off = sliding(runs / "sl", "--seg-len", "32", "--no-same-length")
    assert (off["same_length"], off["window"]) == (False, 0)
    assert off["bpc"] != sl["bpc"]
    assert plain["bpc"] != sliding(runs / "plain", "--seg-len", "32")["bpc"]
    whole = sliding(runs / "sl", "--no-same-length")["bpc"]
    assert sliding(runs / "sl")["bpc"] == pytest.approx(whole, abs=1e-6)


def test_sliding_same_length_refused_only_without_memory(runs):
    res = txl("evaluate", runs / "nomem", "--mode", "sliding", "--same-length")
    assert one_line(res, 2) == (
        f"{PROG} evaluate: error: same_length needs memory: in the sliding window "
        "(--mode sliding) it leaves each query its last mem_len keys, and this "
        "checkpoint's mem_len is 0, so every query would see only itself; drop "
        "--same-length or use --mode segments with --mem-len > 0")


def test_no_same_length_in_segments_and_help(runs):
    res = txl("evaluate", runs / "sl", "--chars", "600", "--no-same-length", "--json")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert json.loads(res.stdout)["same_length"] is False
    text = txl("evaluate", "--help").stdout
    assert "--same-length, --no-same-length" in text
    assert "default: the checkpoint's setting" in " ".join(text.split())


def test_shaw_clamp_len_names_shaw_clip(runs):
    res = txl("evaluate", runs / "shaw", "--clamp-len", "3")
    assert one_line(res, 2) == (
        f"{PROG} evaluate: error: --clamp-len 3 does nothing with a --pos-enc shaw "
        "checkpoint; its clipping distance is the shaw_clip it was trained with "
        "(train's --shaw-clip); drop it")


def bash(line: str, cwd, **env):
    """`python LINE` as bash reads it: a hint pasted into a shell."""
    return subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} {line}"],
                          cwd=cwd, env=dict(ENV, **env), text=True,
                          capture_output=True, timeout=300)


def test_resume_of_last_pt_names_its_run_directory(tmp_path):
    res = txl("train", *RUN, "--steps", "2", "--pause-at", "1", "--run-dir", "r",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = txl("train", "--resume", "r/last.pt", cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} train: error: --resume r/last.pt: a file of "
                                "a run directory; give its run directory: --resume r")
    hint = res.stderr.rstrip("\n").rsplit(": ", 1)[1]
    res = bash(f"-m txl_mini train {hint}", tmp_path)
    assert res.returncode == 0 and "trained 2 steps" in res.stdout, res.stderr


@pytest.mark.parametrize("name, env", [
    ("lit\\udcfe", {}),  # the literal text, which printable() read as a byte
    ("café", {"PYTHONIOENCODING": "ascii"}),
    ("café", {}),
])
def test_pasted_resume_hint_names_the_folder(tmp_path, name, env):
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train", *RUN, "--steps",
                          "2", "--pause-at", "1", "--run-dir", name], cwd=tmp_path,
                         env=dict(ENV, **env), text=True, capture_output=True,
                         timeout=300)
    assert res.returncode == 0 and os.listdir(tmp_path) == [name], res.stderr
    hint = re.search(r"continue with (--resume .*)$", res.stdout + res.stderr, re.M)
    assert hint, res.stdout + res.stderr
    res = bash(f"-m txl_mini train {hint[1]}", tmp_path, **env)
    assert res.returncode == 0 and "trained 2 steps" in res.stdout, (
        hint[1], res.stderr)


@pytest.mark.parametrize("typed, names", [
    (["--tie-weights", "--no-tie-weights"], "--tie-weights, --no-tie-weights"),
    (["--no-tie", "--tie-w", "--lr=0.1"], "--lr, --no-tie-weights, --tie-weights"),
])
def test_resume_refusal_names_every_spelling_typed(runs, typed, names):
    res = txl("train", "--resume", runs / "plain", *typed)
    assert one_line(res, 2) == (f"{PROG} train: error: --resume continues the run "
                                f"with its own settings; drop {names}")
