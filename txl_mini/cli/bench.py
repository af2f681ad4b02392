"""`python -m txl_mini bench`: training and evaluation speed, FLOP use, memory.

One run measures, on one device with the same thread count: training tokens/s and
model FLOP utilisation (MFU, by wall-clock and by CPU time) of XL with the fast path,
with the readable path and of the vanilla baseline, and the ratios between them
(`txl_mini.cli.bench_train`, whose `train_flops_per_token` counts the FLOPs);
seconds per predicted character, XL with memory vs the vanilla sliding window (the
paper's Table 9), and memory flatness (`txl_mini.cli.bench_eval`); with --profile,
where a training step's time goes (`txl_mini.cli.bench_profile`); and the peak memory
of every measurement. This module holds the command line and the printed table.
"""

from __future__ import annotations

import argparse
import logging
import time
from contextlib import nullcontext

import torch

from ..config import preset
from .bench_eval import (
    EVAL_LENS,
    SHAPES,
    bench_eval,
    check_long_segments,
    format_eval,
    max_attn_len,
    memory_flatness,
)
from .bench_json import check_json, write_json, wrote
from .bench_profile import format_profile, profile_step
from .bench_train import bench_training, device_name, matmul_flops, train_config
from .compile_cache import check_compile_cache
from .errors import CompileFailed
from .memory import check_memory
from .options import (
    Parser,
    UsageError,
    check_at_least,
    command,
    fail,
    pick_device,
    set_threads,
)
from .rundir import remove_created

PROG = "python -m txl_mini bench"


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(prog=PROG, description=(__doc__ or "").partition("\n")[0])  # -OO: None
    add = ap.add_argument
    add("--quick", action="store_true", help="small smoke run (< 60 s on a CPU)")
    add("--json", metavar="PATH", help="also write the results as JSON here")
    # cpu or cuda only: the timings synchronise CUDA alone (speed.synchronize), so on
    # Apple's MPS they would time queued kernels
    add("--device", default="auto", choices=("auto", "cpu", "cuda"),
        help="auto: cuda if available, else cpu")
    add("--threads", type=int, default=1, help="torch CPU threads")
    add("--batch", type=int, help="training batch size (default: 16; --quick: 4)")
    add("--eval-batch", type=int, default=1,
        help="evaluation batch size, the same for XL and the vanilla window")
    add("--rounds", type=int, help="interleaved timing rounds (default: 5; --quick: 2)")
    add("--steps", type=int, help="training steps per round (default: 3; --quick: 2)")
    add("--max-attn-len", type=int,
        help="longest evaluation attention length: it runs those of 128, 512, 800, "
        "1800, 2800, 3800 up to this (default: 3800; --quick: 1024)")
    add("--no-paper-shape", action="store_true",  # .left_out: typos.hint's line
        help="skip Table 9 at the paper's model shape (skipped by --quick)"
        ).left_out = "the paper's shape runs by default, unless --quick"
    add("--long-segments", type=int, default=2000,
        help="segments of the memory-flatness evaluation")
    add("--compile", action="store_true",
        help="torch.compile the training models (CUDA only)")
    add("--profile", action="store_true",
        help="also split one training step per model by torch.profiler (CPU only)")
    add("--quiet", "--no-progress", dest="quiet", action="store_true",
        help="no progress bars")
    return ap


def check_args(args, made: list) -> tuple[torch.device, object]:
    """The device, and what --json held when checked (files.snapshot; ANY without
    it): the write at the end replaces only that."""
    check_at_least(args, {"threads": 1, "batch": 1, "eval_batch": 1, "rounds": 1,
                          "steps": 1, "max_attn_len": min(EVAL_LENS),
                          "long_segments": 20})
    check_long_segments(args.long_segments)
    set_threads(args.threads)
    args.batch = args.batch or (4 if args.quick else 16)  # a given one, also --quick's
    check_compile_cache()  # torch makes it as the first Adam is built
    was = check_json(args, made)  # before minutes of benchmarking
    device = pick_device(args.device)
    if device.type == "mps":  # auto on a Mac: the CPU (see --device)
        device = torch.device("cpu")
    if args.profile and device.type != "cpu":
        raise UsageError("--profile splits CPU time: use it with --device cpu")
    if args.compile and device.type != "cuda":  # see bench_train.Trainer
        raise UsageError(f"--compile is for CUDA: on a CPU torch {torch.__version__}'s "
                         "compiler failed the training step (corrupt tensor shapes) or "
                         "crashed (segfault); drop --compile here")
    check_bench_memory(args, device)
    return device, was


def check_bench_memory(args, device: torch.device) -> None:
    """The two sizes a user sets, each against memory before minutes of benchmarks:
    training at --batch, and the book-shape evaluation's longest attention length at
    --eval-batch (the vanilla window, of A keys for each of its A queries, needs the
    most). The paper's shape runs at batch 1, the memory flatness on a small model."""
    cfg = train_config(args.quick)
    try:
        check_memory(cfg, args.batch, cfg.mem_len, True, device, run_size="--batch")
    except UsageError as e:
        raise UsageError(f"training (--batch {args.batch}): {e}") from None
    A = max_attn_len(args)
    window = preset(SHAPES["book"][0]).replace(seg_len=A)
    try:
        check_memory(window, args.eval_batch, 0, False, device,
                     run_size="--eval-batch or --max-attn-len")
    except UsageError as e:
        raise UsageError(f"evaluation at attention length {A} (--eval-batch "
                         f"{args.eval_batch}): {e}") from None


@command(PROG, errors=(CompileFailed,))
def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    made: list[str] = []  # --json's folders made here: gone again if it is not written
    try:
        device, was = check_args(args, made)
        result = run_bench(args, device)
        failed = write_json(args.json, result, was) if args.json else None
        print(format_report(result))  # after the JSON: `| head -1` closed the pipe
        # here, exit 141, before the JSON was written (minutes of benchmarks lost)
        return fail(PROG, failed, 1) if failed else wrote(args.json)
    finally:
        remove_created(made)  # those still empty: a refusal, Ctrl-C, a failed write


def run_bench(args, device: torch.device) -> dict:
    amp_dtype = torch.bfloat16 if device.type == "cuda" else None  # autocast on CUDA

    def amp():
        return torch.autocast("cuda", dtype=amp_dtype) if amp_dtype else nullcontext()

    progress = not args.quiet
    cfg = train_config(args.quick)
    batch = args.batch
    rounds = args.rounds or (2 if args.quick else 5)
    steps = args.steps or (2 if args.quick else 3)
    lens = [a for a in EVAL_LENS if a <= max_attn_len(args)]
    name = device_name(device)
    print(f"device: {device} ({name}), torch threads: {torch.get_num_threads()}, "
          f"autocast: {amp_dtype}, compile: {args.compile}")
    if args.compile:  # dynamo's graph-break advice is for torch developers: 21 lines
        torch._logging.set_logs(dynamo=logging.ERROR)

    t0 = time.perf_counter()
    n = 512 if args.quick else 1024
    ceil1 = matmul_flops(device, n, 3 if args.quick else 5)
    # smallest memory needs first, so that every peak-memory reading starts low
    flat = memory_flatness(device, args.long_segments, amp, progress)
    evals = bench_eval(lens, device, amp_dtype, args.quick, progress, args.eval_batch)
    paper = (None if args.quick or args.no_paper_shape else bench_eval(
        [a for a in lens if a >= 800], device, amp_dtype, False, progress, 1, "paper"))
    train = bench_training(cfg, batch, device, rounds, steps, amp, args.compile,
                           progress)
    ceil2 = matmul_flops(device, n, 3)
    prof = profile_step(cfg, batch, device, progress) if args.profile else None
    # the best of both
    ceiling, ceiling_cpu = max(ceil1[0], ceil2[0]), max(ceil1[1], ceil2[1])

    fast, ref, van = (train[k]["tokens_per_s"]
                      for k in ("xl_fast", "xl_readable", "vanilla"))
    cpu = {k: v["tokens_per_cpu_s"] for k, v in train.items()}
    return {
        "device": str(device), "device_name": name, "threads": torch.get_num_threads(),
        "torch": torch.__version__, "autocast": str(amp_dtype), "compile": args.compile,
        "quick": args.quick, "train_config": cfg.__dict__, "batch": batch,
        "eval_batch": args.eval_batch,
        "train": train,
        "ratios": {"fast_over_readable": fast / ref,
                   "xl_step_over_vanilla_step": van / fast,
                   "fast_over_readable_cpu": cpu["xl_fast"] / cpu["xl_readable"],
                   "xl_step_over_vanilla_step_cpu": cpu["vanilla"] / cpu["xl_fast"]},
        "matmul_flop_per_s": ceiling, "matmul_flop_per_cpu_s": ceiling_cpu,
        "mfu": {k: v["flop_per_s"] / ceiling for k, v in train.items()},
        "mfu_cpu_time": {k: v["tokens_per_cpu_s"] * v["flops_per_token"] / ceiling_cpu
                         for k, v in train.items()},
        "eval": evals, "eval_paper_shape": paper, "memory_flatness": flat,
        "profile": prof, "seconds": time.perf_counter() - t0,
    }


def format_report(r: dict) -> str:
    """The bench's results as text tables (as in the README's Performance section)."""
    c = r["train_config"]
    lines = [f"training: d_model {c['d_model']}, {c['n_layer']} layers, "
             f"{c['n_head']} heads, L = M = {c['seg_len']}, batch {r['batch']}",
             f"{'model':<14}{'tokens/s':>10}{'tokens/CPU s':>14}{'GFLOP/s':>9}"
             f"{'MFU':>7}{'peak MiB':>10}{'rise':>7}"]
    for k, v in r["train"].items():
        lines.append(f"{k:<14}{v['tokens_per_s']:>10.0f}{v['tokens_per_cpu_s']:>14.0f}"
                     f"{v['flop_per_s'] / 1e9:>9.2f}{r['mfu'][k]:>7.1%}"
                     f"{v['peak_mem_mib']:>10.0f}{v['peak_rise_mib']:>7.0f}")
    ra = r["ratios"]
    lines.append(f"fast / readable: {ra['fast_over_readable']:.2f}x wall, "
                 f"{ra['fast_over_readable_cpu']:.2f}x CPU time; "
                 "XL step / vanilla step: "
                 f"{ra['xl_step_over_vanilla_step']:.2f}x wall, "
                 f"{ra['xl_step_over_vanilla_step_cpu']:.2f}x CPU time")
    mc = r["mfu_cpu_time"]
    lines.append(f"matmul ceiling {r['matmul_flop_per_s'] / 1e9:.1f} GFLOP/s wall, "
                 f"{r['matmul_flop_per_cpu_s'] / 1e9:.1f} per CPU s; MFU by CPU time: "
                 + ", ".join(f"{k} {v:.1%}" for k, v in mc.items()))
    clock = f"timed by {r['eval'][0]['clock']}"
    lines += format_eval(r["eval"], f"evaluation, book shape (batch {r['eval_batch']})"
                         f", seconds per predicted character, {clock}:")
    if r.get("eval_paper_shape"):
        lines += format_eval(r["eval_paper_shape"], "evaluation, the paper's shape "
                             f"(text8_base, XL segments of 128, batch 1), {clock}:")
    f = r["memory_flatness"]
    lines.append(f"memory flatness: peak {f['peak_long_mib']:.1f} MiB after "
                 f"{f['segments_long']} segments vs {f['peak_short_mib']:.1f} MiB "
                 f"after {f['segments_short']} ({f['ratio']:.3f}x)")
    if r.get("profile"):
        lines.append(format_profile(r["profile"]))
    return "\n".join(lines)


if __name__ == "__main__":  # python -m txl_mini.cli.bench: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("bench")
