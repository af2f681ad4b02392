"""`python -m txl_mini bench` end to end: a tiny run in a subprocess, its JSON
checked."""

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from txl_mini.cli.bench_profile import CATEGORIES
from txl_mini.cli.bench_train import train_flops_per_token
from txl_mini.config import ModelConfig


def _bench(*args, tmp_path=None):
    pythonpath = os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=pythonpath)
    return subprocess.run([sys.executable, "-m", "txl_mini", "bench", *args],
                          capture_output=True, text=True, env=env, timeout=600)


def test_quick_bench_runs_and_writes_sane_json(tmp_path):
    path = tmp_path / "bench.json"
    proc = _bench("--quick", "--rounds", "1", "--steps", "1", "--max-attn-len", "128",
                  "--long-segments", "40", "--eval-batch", "2", "--no-progress",
                  "--profile", "--json", str(path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "device: cpu" in proc.stdout and "torch threads: 1" in proc.stdout
    assert "fast / readable" in proc.stdout
    r = json.loads(path.read_text())
    assert set(r["train"]) == {"xl_fast", "xl_readable", "vanilla"}
    for v in r["train"].values():
        assert v["tokens_per_s"] > 0 and v["tokens_per_cpu_s"] > 0
        assert v["flop_per_s"] == pytest.approx(
            v["tokens_per_s"] * v["flops_per_token"])
        assert v["peak_mem_mib"] > 0
    ra = r["ratios"]
    t = r["train"]
    assert ra["fast_over_readable"] == pytest.approx(
        t["xl_fast"]["tokens_per_s"] / t["xl_readable"]["tokens_per_s"])
    assert ra["xl_step_over_vanilla_step"] == pytest.approx(
        t["vanilla"]["tokens_per_s"] / t["xl_fast"]["tokens_per_s"])
    assert r["matmul_flop_per_s"] > 1e8  # any CPU of this decade does 0.1 GFLOP/s
    for k, m in r["mfu"].items():
        # timings are noisy, but MFU far above 1 means a wrong count
        assert 0 < m < 1.5, (k, m)
    assert [e["attn_len"] for e in r["eval"]] == [128]
    e = r["eval"][0]
    fastest = min(e["xl_s_per_char"], e["xl_cache_s_per_char"])
    assert e["speedup"] == pytest.approx(e["vanilla_s_per_char"] / fastest)
    assert e["cache_used"] == (e["xl_cache_s_per_char"] < e["xl_s_per_char"])
    assert e["shape"] == "book" and e["preset"] == "book"
    assert e["xl_s_per_char"] > 0 and e["peak_mem_mib"] > 0
    assert r["eval_paper_shape"] is None  # --quick skips the paper's shape
    assert "the paper's shape" not in proc.stdout
    assert (e["batch_size"] == r["eval_batch"] == 2
            and "batch 2" in proc.stdout)  # --eval-batch
    f = r["memory_flatness"]
    assert (f["segments_short"], f["segments_long"]) == (20, 40)
    assert f["ratio"] == pytest.approx(f["peak_long_mib"] / f["peak_short_mib"])
    assert r["threads"] == 1 and r["device"] == "cpu"
    assert "Amdahl" in proc.stdout
    assert set(r["profile"]) == set(r["train"])  # one profiled training step per model
    for name, p in r["profile"].items():
        assert set(p) == set(CATEGORIES) | {"step_s"} and p["step_s"] > 0, (name, p)
        shares = {c: p[c] / p["step_s"] for c in CATEGORIES}
        assert all(v >= 0 for v in shares.values()), (name, shares)
        # ops cover most of the step
        assert 0.5 < sum(shares.values()) <= 1.0, (name, shares)
        for c in ("linear", "attention", "optimizer"):
            assert shares[c] > 0.01, (name, c, shares)
        # how backward ops are charged: test_profile_charges_backward_ops_..., by count


class _Unit:
    """A profiler event that weighs one "second", whatever it took: _categorise then
    counts top-level ops and their backward nodes instead of adding up times."""

    cpu_time_total = 1e6  # microseconds

    def __init__(self, ev):
        self.ev = ev

    def __getattr__(self, name):
        return getattr(self.ev, name)


@pytest.mark.parametrize("name", ["xl_fast", "xl_readable", "vanilla"])
def test_profile_charges_backward_ops_to_their_forward_op(name):
    """How bench --profile splits a training step, checked by counting ops, not by
    timing them: the profiler times each op by wall clock, so another process on the
    CPU inflates whichever op it interrupts, and a time-share check ("other" below
    "linear") once failed on a busy machine. Each nn.Linear's backward (the matmuls
    of its gradients, their transposes) must be charged to "linear": if the charging
    by sequence number broke, they would land in "other" and "linear" would count its
    forward ops only."""
    from contextlib import nullcontext

    from torch.profiler import ProfilerActivity, profile

    from txl_mini.cli import bench_profile
    from txl_mini.cli.bench_train import Trainer, train_config, training_models

    cfg = train_config(True)
    model, _ = training_models(cfg)[name]
    trainer = Trainer(model, cfg, 4, torch.device("cpu"), nullcontext, False)
    trainer.step()  # warm-up, as profile_step
    hooks = bench_profile._label_attention(trainer.model)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        trainer.step()
    for h in hooks:
        h.remove()
    events = list(prof.events())
    counts = bench_profile._categorise([_Unit(e) for e in events])
    forward_linear = sum(e.name == "aten::linear" for e in events)
    assert forward_linear > 0 and counts["linear"] >= 3 * forward_linear, counts
    for c in ("attention", "optimizer", "other"):
        assert counts[c] > 0, (c, counts)


@pytest.mark.parametrize("bad", [["--long-segments", "5"], ["--device", "mps"],
                                 ["--device", "nonsense"], ["--eval-batch", "0"]])
def test_bad_arguments_give_one_line_and_nonzero_exit(tmp_path, bad):
    proc = _bench(*bad, "--json", str(tmp_path / "x.json"))
    assert proc.returncode != 0
    assert proc.stderr.startswith("python -m txl_mini bench: error:")
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_flop_count_by_hand():
    """The documented count on a config small enough to add up by hand."""
    cfg = ModelConfig(n_layer=1, n_head=1, d_head=2, d_model=2, d_inner=4, vocab_size=3,
                      seg_len=2, mem_len=2)
    # C = HD = 2, F = 4, V = 3, L = 2, K = 4, batch 1
    layer_vanilla = (2 * 2 * 2 + 4 * 1 * 2 * 2 + 2 * 2 * 2 + 4 * 2 * 4
                     + 4 * 2 * 2)  # K = L = 2
    assert train_flops_per_token(cfg, False, 1) == 3 * (layer_vanilla + 2 * 2 * 3)
    layer_xl = (2 * 2 * 2 + 4 * 2 * 2 * 2 + 2 * 2 * 2 + 4 * 2 * 4 + 4 * 4 * 2  # K = 4:
                + 2 * 5 * 2  # (b)+(d) over K+1 = 5,
                + 2 * 4 * 2 * 2 / 2)  # W_kr R / (B L)
    assert math.isclose(train_flops_per_token(cfg, True, 1), 3 * (layer_xl + 2 * 2 * 3))


def test_paper_shape_rows_and_table(monkeypatch):
    # The real paper shape (text8_base) takes minutes; the plumbing is the same with a
    # tiny preset in its place: rows name their shape, the table shows both XL paths.
    from txl_mini.cli import bench_eval as be

    monkeypatch.setitem(be.SHAPES, "paper", ("tiny", 4, 8, 1))
    rows = be.bench_eval([800], torch.device("cpu"), None, False, False, 1, "paper")
    (r,) = rows
    assert (r["shape"], r["preset"], r["seg_len"], r["attn_len"]) == ("paper", "tiny",
                                                                       4, 800)
    assert r["paper_speedup"] == 363 and r["flop_ratio"] > 1
    lines = be.format_eval(rows, "title")
    assert lines[0] == "title" and "+ cache" in lines[1]
    assert lines[2].split()[0] == "800" and lines[2].split()[-1] == "363x"
