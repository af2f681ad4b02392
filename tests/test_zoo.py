"""The model zoo (book/zoo, scripts/train_zoo.py): complete, loadable, reproducible."""

import shlex
import sys
from pathlib import Path

import pytest
import torch

from txl_mini.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "book" / "zoo"
sys.path.insert(0, str(ROOT / "scripts"))
import train_zoo  # noqa: E402  (a script, not a package module)

NAMES = [f"{g}_{v}_s{s}" for g, spec in train_zoo.GROUPS.items()
         for v in spec["variants"] for s in train_zoo.SEEDS]


def test_zoo_is_complete_and_small():
    files = sorted(p.stem for p in ZOO.glob("*.pt"))
    missing = sorted(set(NAMES) - set(files))
    assert not missing, (f"{len(missing)} zoo checkpoints missing: {missing}; "
                         "train them with python scripts/train_zoo.py all")
    assert files == sorted(NAMES), f"not in GROUPS: {sorted(set(files) - set(NAMES))}"
    size = sum(p.stat().st_size for p in ZOO.glob("*.pt"))
    assert size < 60 * 2**20, f"the zoo is {size / 2**20:.1f} MiB"


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_loads_with_its_record(name):
    assert (ZOO / f"{name}.pt").exists(), f"book/zoo/{name}.pt missing"
    model, meta = load_checkpoint(ZOO / f"{name}.pt")  # weights_only=True inside
    group, variant, seed = name.split("_")[0], name.split("_")[1], int(name[-1])
    assert (meta["group"], meta["variant"], meta["seed"]) == (group, variant, seed)
    built = train_zoo.build(group, variant)  # the architecture the script trains
    assert type(model) is type(built) and model.cfg == built.cfg
    assert meta["steps"] == train_zoo.GROUPS[group]["steps"]  # equal budgets
    assert meta["valid_curve"][-1][0] == meta["steps"]
    assert len(meta["commit"]) == 40 and meta["torch"]
    assert f"--path book/zoo/{name}.pt" in meta["command"]
    # the learning rate: the sweep's winner on seed 0, or half of it (twice at most)
    # where the winner failed the convergence check (twice the steps moved validation
    # bpc by 0.02 or more) and was the best at the full budget so far
    best = min(meta["sweep"], key=lambda row: row["valid_bpc"])
    doubling, tried = meta["doubling"], meta["doubling"]["tried"]
    assert 1 <= len(tried) <= 3
    assert [(r["lr"], r["half_loss"]) for r in tried] == [
        (best["lr"] / 2**k, best["half_loss"]) for k in range(len(tried))]
    for k in range(1, len(tried)):
        before = tried[:k]
        assert abs(before[-1]["change"]) >= train_zoo.CONVERGED
        assert before[-1]["valid_bpc"] == min(r["valid_bpc"] for r in before)
    kept = min(tried, key=lambda r: r["valid_bpc"])
    assert (meta["lr"], meta["half_loss"]) == (kept["lr"], kept["half_loss"])
    assert doubling["change"] == pytest.approx(kept["change"])
    # the sweep ran at a shorter budget, the convergence check at twice it (the
    # chapters print and assert the change it measured)
    assert meta["sweep_steps"] == train_zoo.GROUPS[group]["sweep_steps"]
    assert doubling["steps"] == 2 * meta["steps"]
    assert len(meta["sweep"]) >= 3


def test_the_long_vanilla_control_sees_xls_context_with_the_same_parameters():
    # the whole-model chapter's vanilla control reads segments of M + L (XL's context)
    # and has as many parameters as the ch6 vanilla model (sinusoid positions have none)
    variants = ("xl", "vanilla", "vanilla64")
    xl, short, long = (train_zoo.build("ch6", v) for v in variants)
    assert long.cfg.seg_len == xl.cfg.mem_len + xl.cfg.seg_len == 64
    assert long.cfg.mem_len == 0 and long.cfg.d_inner == short.cfg.d_inner == 576
    count = [sum(p.numel() for p in m.parameters()) for m in (short, long, xl)]
    assert count[0] == count[1] and abs(count[1] - count[2]) <= 64, count


def test_first_steps_reproduce_from_the_recorded_command():
    # the cheapest model; its command, cut short, on this machine's CPU
    _, meta = load_checkpoint(ZOO / "ch4_xl_s1.pt")
    argv = shlex.split(meta["command"])[2:]
    assert argv[0] == "one"
    args = _parse(argv + ["--stop-after", "30", "--device", "cpu", "--path", ""])
    record = train_zoo.run_one(args)
    ours = torch.tensor(record["train_loss_first"])
    recorded = torch.tensor(meta["train_loss_first"][:30])
    assert ours.shape == recorded.shape == (30,)
    # other CPUs, torch versions: rounding differs, the curve does not
    assert torch.allclose(ours, recorded, atol=1e-3), (ours - recorded).abs().max()
    assert recorded[0] - recorded[-1] > 0.3  # and it is a curve that moves


def _parse(argv):
    """The `one` subcommand's arguments, as the script parses them."""
    captured = {}
    real = train_zoo.run_one

    def capture(a):
        captured["a"] = a
        return {"valid_bpc": 0.0, "seconds": 0.0, "device": a.device}

    train_zoo.run_one = capture
    try:
        train_zoo.main(argv)
    finally:
        train_zoo.run_one = real
    return captured["a"]
