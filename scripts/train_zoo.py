"""Train the model zoo: the models whose numbers chapters 4, 6 and 7 quote (issue 19).

    python scripts/train_zoo.py all [--only NAME] [--workers 16]   # the whole zoo
    python scripts/train_zoo.py one --group ch4 --variant xl --lr 0.004 --seed 0 ...

`all` does, for every group (a chapter's comparison) and variant (a model of it):
1. a learning-rate sweep on seed 0 at `sweep_steps` (LRS, widened by a factor of 2
   (twice at most) while the best rate lies at an edge; the §3.3 model also with
   half losses), each run scored by validation bpc on the group's validation split;
2. the convergence check: seed 0 at the winning setting for the full budget and at
   twice it; while that moves validation bpc by 0.02 or more, half the rate is tried
   as well (twice at most: short sweeps cannot see a rate that turns unstable later),
   and the rate with the best bpc at the full budget is kept;
3. seeds 1 and 2 at the kept setting for the full budget.
It writes book/zoo/<group>_<variant>_s<seed>.pt (txl_mini.checkpoint, weights only)
whose meta holds the exact `one` command that trained it, seed, commit, torch version,
device, the validation curve, the first training losses, the sweep and the doubling
check. Sweep runs and their records live in --work (default runs/zoo); a run already
there is skipped, and so is a variant whose three checkpoints are in --out unless
--only names it, so running it again only fills the gaps. Jobs
run in --workers processes of one torch thread each (cuda workers with --cuda-workers).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict

import torch

from txl_mini.checkpoint import save_checkpoint
from txl_mini.config import preset
from txl_mini.corpus import BOOK_CORPORA, make_offline_corpus
from txl_mini.data import CharVocab
from txl_mini.evaluate import evaluate_segments
from txl_mini.model import TransformerXL, VanillaTransformer
from txl_mini.train import TrainConfig, train_steps

SMALL = dict(n_head=4, d_head=16, d_model=64, d_inner=256, dropout=0.0)
# The cue corpus of the fragmentation and relative-memory chapters (and of
# scripts/train_cue_models.py): random-letter names of 8-12 letters, each repeated
# exactly 24 characters later. A name inside the segment (k >= 23) teaches copying;
# from the memory it is the same skill, further back.
CUE = BOOK_CORPORA["cue"]  # the settings live in txl_mini.corpus (`--corpus cue`)
# The whole-model chapter's corpus: syllable names repeated 32, 64 or 96 characters
# later, in text of made-up words; 2M characters, so that 16,000 steps are ~5 passes.
NAMES = BOOK_CORPORA["names"]  # `--corpus names`
# The RECL chapter measures RECL on the models of group ch4 (relative memory).
GROUPS = {
    "ch4": dict(corpus=CUE, steps=32000, sweep_steps=4000,
                variants=["vanilla", "rel0", "shaw", "absmem", "xl"],
                cfg=preset("book", n_layer=2, seg_len=32, mem_len=32, **SMALL)),
    # 3 layers of C = 128 and 8 heads: at C = 64 and 4 heads no model learned to copy
    # the planted names in 16,000 steps; at this width XL copies those at d = 32 (one
    # memory back). The vanilla model gets 64 more feed-forward units per layer, which
    # matches XL's W_kR, u and v to within 64 parameters (an exercise of the whole-model
    # chapter)
    # vanilla64 (issue 29): the vanilla control with XL's whole context, L = M + L = 64
    # (same d_inner 576; sinusoid positions have no parameters, so its count does not
    # depend on L). It trains on segments of 64 with the same batch of 16 streams and
    # number of steps, so it reads twice the characters per step. Its validation bpc is
    # evaluate_segments on the same validation split in segments of 64 (each position
    # sees 0-63 characters before it, XL's see 32-63 + memory); that evaluator scores
    # every target of the split once whatever L is, so the numbers are about the same
    # characters as the others'.
    "ch6": dict(corpus=NAMES, steps=16000, sweep_steps=4000, vanilla_d_inner=576,
                variants=["vanilla", "rel0", "xl", "vanilla64"],
                cfg=preset("book", n_layer=3, seg_len=32, mem_len=32, n_head=8,
                           d_head=16, d_model=128, d_inner=512, dropout=0.0)),
    # The first ch6 group (commit e3675a2), kept so that the whole-model chapter can
    # report the width where no model copied (issue 29): C = 64, 4 heads, vanilla
    # d_inner 288 (163,323 parameters against XL's 163,355). Its checkpoints were
    # trained as group "ch6" and republished under this name, weights and records
    # unchanged.
    "ch6c64": dict(corpus=NAMES, steps=16000, sweep_steps=4000, vanilla_d_inner=288,
                   variants=["vanilla", "rel0", "xl"],
                   cfg=preset("book", n_layer=3, seg_len=32, mem_len=32, **SMALL)),
}
# every group's variants in the groups' order: the `one` command's choices
VARIANTS = list(dict.fromkeys(v for g in GROUPS.values() for v in g["variants"]))
LRS = [2e-3, 4e-3, 8e-3]
SEEDS = [0, 1, 2]
BATCH = 16
CONVERGED = 0.02  # twice the steps must move seed 0's validation bpc less than this
CURVE_POINTS = 12  # validation bpc this many times per run


def build(group: str, variant: str):
    """The model of `variant` in `group` (the relative-memory chapter's switches)."""
    cfg = GROUPS[group]["cfg"]
    if variant.startswith("vanilla"):  # absolute positions, no memory
        d_inner = GROUPS[group].get("vanilla_d_inner", cfg.d_inner)
        # vanilla64: segments as long as XL's memory plus segment
        L = cfg.mem_len + cfg.seg_len if variant == "vanilla64" else cfg.seg_len
        return VanillaTransformer(cfg.replace(d_inner=d_inner, seg_len=L))
    return TransformerXL({"rel0": cfg.replace(mem_len=0),
                          "shaw": cfg.replace(pos_enc="shaw"),
                          "absmem": cfg.replace(pos_enc="absolute"),
                          "xl": cfg}[variant])


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("ZOO_COMMIT", "unknown")  # a copy without .git


def splits(group: str):
    corpus = make_offline_corpus(**GROUPS[group]["corpus"])
    train_c, valid_c, _ = corpus.split()
    vocab = CharVocab()
    return vocab.encode(train_c.text), vocab.encode(valid_c.text)


def run_one(a) -> dict:
    """Train one model as `a` says; save it to a.path; return its record."""
    torch.set_num_threads(1)
    device = torch.device(a.device)
    train_tokens, valid_tokens = splits(a.group)
    tc = TrainConfig(steps=a.steps, batch_size=BATCH, lr=a.lr, warmup=50,
                     seed=a.seed)
    torch.manual_seed(a.seed)
    model = build(a.group, a.variant).to(device)
    L = model.cfg.seg_len

    def half(y):  # the paper's "half losses": score only the recent half
        y = y.clone()
        y[:, :L // 2] = -100  # cross_entropy's ignore_index
        return y

    losses, curve, every = [], [], max(1, a.steps // CURVE_POINTS)
    t0 = time.time()
    # the library's loop (txl_mini.train.train_steps): segments, memory, schedule
    for step, _, out in train_steps(model, train_tokens, tc,
                                    half if a.half_loss else None):
        losses.append(out.loss.item())
        if (step + 1) % every == 0 or step + 1 == a.steps:
            bpc = evaluate_segments(model, valid_tokens, batch_size=4).bpc
            curve.append([step + 1, bpc])
            model.train()
        if step + 1 == a.stop_after:
            break
    record = dict(group=a.group, variant=a.variant, lr=a.lr, seed=a.seed,
                  steps=a.steps, half_loss=a.half_loss, device=str(device),
                  valid_bpc=curve[-1][1] if curve else None, valid_curve=curve,
                  train_loss_first=losses[:100],
                  train_loss_per_100=[sum(losses[i:i + 100]) / len(losses[i:i + 100])
                                      for i in range(0, len(losses), 100)],
                  seconds=round(time.time() - t0, 1), command=command_of(a),
                  commit=git_commit(), torch=str(torch.__version__),
                  corpus=GROUPS[a.group]["corpus"], train=asdict(tc))
    if a.path and not a.stop_after:
        save_checkpoint(a.path, model.cpu(), record)  # atomic
    return record


def command_of(a) -> str:
    args = ["python", "scripts/train_zoo.py", "one", "--group", a.group, "--variant",
            a.variant, "--lr", repr(a.lr), "--seed", str(a.seed), "--steps",
            str(a.steps), "--device", a.device, "--path", a.path or ""]
    return shlex.join(args + (["--half-loss"] if a.half_loss else []))


# --------------------------------------------------------------------------------------
# The whole zoo
# --------------------------------------------------------------------------------------

def job(group, variant, lr, seed, steps, half_loss, path):
    return argparse.Namespace(group=group, variant=variant, lr=lr, seed=seed,
                              steps=steps, half_loss=half_loss, path=path,
                              device="cpu", stop_after=0)


def _work(a, devices):
    """Run job `a` on a free device, write its record beside its checkpoint."""
    a.device = devices.get()
    try:
        record = run_one(a)
    finally:
        devices.put(a.device)
    with open(a.path + ".json", "w") as f:
        json.dump({k: v for k, v in record.items() if k != "train_loss_per_100"}, f)
    print(f"{os.path.basename(a.path)}: {record['valid_bpc']:.3f} bpc, "
          f"{record['seconds']:.0f} s on {a.device}", flush=True)
    return record


def run_jobs(jobs, devices, pool):
    todo = [a for a in jobs if not os.path.exists(a.path + ".json")]
    list(pool.map(_work, todo, [devices] * len(todo)))
    return {a.path: json.load(open(a.path + ".json")) for a in jobs}


def recipes(variant, lrs):
    halves = [False, True] if variant == "absmem" else [False]
    return [(lr, h) for h in halves for lr in sorted(lrs)]


def named(only: str, g: str, v: str) -> bool:
    """Does --only name variant v of group g, or one of its seeds?"""
    return only == f"{g}_{v}" or only.startswith(f"{g}_{v}_s")


def selected(only: str, g: str, v: str) -> bool:
    """--only: nothing (the whole zoo), a group (ch6), a variant (ch6_xl) or a seed
    (ch6_xl_s1); matched by name parts, so ch6_vanilla is not ch6_vanilla64."""
    return not only or only == g or named(only, g, v)


def run_all(a) -> int:
    import multiprocessing as mp
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    pairs = [(g, v) for g in GROUPS for v in GROUPS[g]["variants"]
             if selected(a.only, g, v)]
    if not pairs:
        sys.exit(f"error: --only {a.only!r} names no zoo model")
    # a variant whose three checkpoints are in --out is left alone (not retrained, not
    # republished) unless --only names it or one of its seeds
    pairs = [(g, v) for g, v in pairs if named(a.only, g, v) or not all(
        os.path.exists(os.path.join(a.out, f"{g}_{v}_s{s}.pt")) for s in SEEDS)]
    if not pairs:
        print(f"nothing to train: every checkpoint is in {a.out}")
        return 0
    if a.only:  # retrain: forget what there is
        for p in [os.path.join(a.out, f"{a.only}.pt"),
                  os.path.join(a.work, f"{a.only}.pt.json")]:
            if os.path.exists(p):
                os.remove(p)
    ctx = mp.get_context("spawn")
    devices = ctx.Manager().Queue()
    for d in ["cuda"] * a.cuda_workers + ["cpu"] * a.workers:
        devices.put(d)
    pool = ProcessPoolExecutor(a.workers + a.cuda_workers, mp_context=ctx)

    def sweep_path(g, v, lr, h):
        return os.path.join(a.work, f"{g}_{v}_lr{lr:g}{'_half' if h else ''}.pt")

    # 1. The sweep: LRS, widened by a factor of 2 while the best rate is at an edge
    grid = {pair: list(LRS) for pair in pairs}
    while True:
        sweep = [job(g, v, lr, 0, GROUPS[g]["sweep_steps"], h, sweep_path(g, v, lr, h))
                 for g, v in pairs for lr, h in recipes(v, grid[g, v])]
        done = run_jobs(sweep, devices, pool)
        best, table = {}, {}
        for g, v in pairs:
            rows = sorted((done[sweep_path(g, v, lr, h)]["valid_bpc"], lr, h)
                          for lr, h in recipes(v, grid[g, v]))
            table[g, v] = [dict(lr=lr, half_loss=h, valid_bpc=b) for b, lr, h in rows]
            best[g, v] = rows[0][1:]
        edges = {p: best[p][0] for p in pairs  # at most two widenings
                 if best[p][0] in (min(grid[p]), max(grid[p]))
                 and len(grid[p]) < len(LRS) + 2}
        if not edges:
            break
        for p, lr in edges.items():
            grid[p].append(lr / 2 if lr == min(grid[p]) else lr * 2)
    # 2. The convergence check, before the other seeds: seed 0 at the budget and at
    # twice it. A 4,000-step sweep cannot see a rate that turns unstable later, so
    # while a rate fails the check (twice the steps move validation bpc by CONVERGED
    # or more) and is the best at the budget so far, its half is tried too (twice at
    # most); the rate with the best bpc at the budget is kept, converged or not.
    def final_job(g, v, lr, h, seed, twice=False):
        steps = GROUPS[g]["steps"]
        tag = f"lr{lr:g}{'_half' if h else ''}_{steps}"
        name = f"{g}_{v}_{'x2' if twice else f's{seed}'}_{tag}.pt"
        return job(g, v, lr, seed, 2 * steps if twice else steps, h,
                   os.path.join(a.work, name))

    tried = {p: [] for p in pairs}  # per pair: dict(lr, half_loss, valid_bpc, change)
    check = dict(best)  # pairs whose rate is still to be checked
    while check:
        jobs = {p: (final_job(*p, lr, h, 0), final_job(*p, lr, h, 0, twice=True))
                for p, (lr, h) in check.items()}
        done.update(run_jobs([j for js in jobs.values() for j in js], devices, pool))
        for p, (once, twice) in jobs.items():
            bpc = done[once.path]["valid_bpc"]
            tried[p].append(dict(lr=once.lr, half_loss=once.half_loss, valid_bpc=bpc,
                                 change=done[twice.path]["valid_bpc"] - bpc))
        check = {p: (t[-1]["lr"] / 2, t[-1]["half_loss"]) for p, t in tried.items()
                 if p in jobs and abs(t[-1]["change"]) >= CONVERGED and len(t) < 3
                 and t[-1]["valid_bpc"] == min(r["valid_bpc"] for r in t)}
    for p, t in tried.items():
        kept = min(t, key=lambda r: r["valid_bpc"])
        best[p] = kept["lr"], kept["half_loss"]
    final = {}  # name -> job
    for g, v in pairs:
        lr, h = best[g, v]
        for s in SEEDS:
            final[f"{g}_{v}_s{s}"] = final_job(g, v, lr, h, s)
        final[f"{g}_{v}_x2"] = final_job(g, v, lr, h, 0, twice=True)
    done.update(run_jobs(list(final.values()), devices, pool))
    pool.shutdown()
    summary = {}
    for g, v in pairs:
        lr, h = best[g, v]
        x2 = done[final[f"{g}_{v}_x2"].path]["valid_bpc"]
        s0 = done[final[f"{g}_{v}_s0"].path]["valid_bpc"]
        extra = dict(sweep=table[g, v], sweep_steps=GROUPS[g]["sweep_steps"],
                     doubling=dict(steps=2 * GROUPS[g]["steps"], valid_bpc=x2,
                                   change=x2 - s0, tried=tried[g, v]))
        seeds = {s: final[f"{g}_{v}_s{s}"].path for s in SEEDS}
        for s, src in seeds.items():
            name = f"{g}_{v}_s{s}"
            if a.only and not name.startswith(a.only):
                continue
            publish(src, os.path.join(a.out, name + ".pt"), extra)
        summary[f"{g}_{v}"] = dict(lr=lr, half_loss=h, **extra, valid_bpc={
            s: done[p]["valid_bpc"] for s, p in seeds.items()})
    with open(os.path.join(a.work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for name, row in summary.items():
        bpcs = list(row["valid_bpc"].values())
        print(f"{name:12s} lr {row['lr']:g}{' half' if row['half_loss'] else ''}: "
              f"{sum(bpcs) / len(bpcs):.3f} bpc [{min(bpcs):.3f}, {max(bpcs):.3f}]; "
              f"x2 steps {row['doubling']['change']:+.3f}"
              + "".join(f"; lr {r['lr']:g} at the budget {r['valid_bpc']:.3f}, "
                        f"x2 {r['change']:+.3f}" for r in row["doubling"]["tried"][1:]))
    return 0


def publish(src, dst, extra):
    """Copy a trained checkpoint to the zoo, its meta completed with `extra`."""
    from txl_mini.checkpoint import load_checkpoint
    model, meta = load_checkpoint(src)
    meta = {**meta, **extra}
    # the same command, writing where the zoo keeps it
    args = shlex.split(meta["command"])
    args[args.index("--path") + 1] = dst
    meta["command"] = shlex.join(args)
    save_checkpoint(dst, model, meta)


def main(argv=None) -> int:
    summary = " ".join(__doc__.split("\n\n")[0].split())
    p = argparse.ArgumentParser(description=summary)
    sub = p.add_subparsers(dest="what", required=True)
    al = sub.add_parser("all", help="sweep, seeds and convergence check; skip done")
    al.add_argument("--only", default="", help="a group, variant or seed: ch6, "
                    "ch6_xl or ch6_xl_s1")
    al.add_argument("--out", default="book/zoo")
    al.add_argument("--work", default="runs/zoo")
    al.add_argument("--workers", type=int, default=2, help="cpu processes")
    al.add_argument("--cuda-workers", type=int, default=0)
    one = sub.add_parser("one", help="train one model")
    one.add_argument("--group", choices=list(GROUPS), required=True)
    one.add_argument("--variant", required=True, choices=VARIANTS)
    one.add_argument("--lr", type=float, required=True)
    one.add_argument("--seed", type=int, default=0)
    one.add_argument("--steps", type=int, required=True)
    one.add_argument("--half-loss", action="store_true")
    one.add_argument("--device", default="cpu")
    one.add_argument("--path", default="", help="checkpoint to write")
    one.add_argument("--stop-after", type=int, default=0,
                     help="stop after this many steps (same schedule), save nothing")
    a = p.parse_args(argv)
    if a.what == "all":
        return run_all(a)
    if a.variant not in GROUPS[a.group]["variants"]:
        p.error(f"group {a.group} has no variant {a.variant}")
    record = run_one(a)
    print(json.dumps({k: record[k] for k in ("valid_bpc", "seconds", "device")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
