"""`python -m txl_mini.bench`: training speed, FLOP utilisation, evaluation speed, memory (ch. 6).

One run measures, on one device with the same thread count:
- training tokens/s of TransformerXL with the fast path, with the readable reference path
  (`fast_attn=False`, the code chapters 3-5 render) and of the vanilla baseline of the same
  size and segment length, timed in interleaved rounds so that load from other processes hits
  all three alike; the ratios are taken between medians of the same run;
- model FLOP utilisation (MFU): achieved training FLOP/s / FLOP/s of a large square matmul
  timed in the same run (the practical ceiling of this device and thread count), once by
  wall-clock time and once by this process's CPU time (which other processes sharing the CPU
  inflate much less; the bench's tokens/s are given both ways too). FLOPs are
  counted by `train_flops_per_token` below (matmuls only, 2 per multiply-add, backward = 2x
  forward);
- seconds per predicted character, XL with memory vs the vanilla sliding window (the paper's
  Table 9), through `txl_mini.speed.eval_speed`, the one implementation chapter 6 also uses;
- peak memory of every measurement, and memory flatness: peak after 2,000 evaluated segments
  vs after 20 (a small model, so it is cheap).
Peak memory is torch.cuda.max_memory_allocated on CUDA and the process's peak resident set
(VmHWM, reset through /proc/self/clear_refs after malloc_trim before each measurement) on a
CPU; "rise" is the peak minus what was in use when the measurement began.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from contextlib import nullcontext

import torch
from tqdm import tqdm

from .config import ModelConfig
from .model import TransformerXL, VanillaTransformer
from .speed import _sync  # one CUDA sync helper for every timing in the package

PAPER_SPEEDUP = {800: 363, 1800: 773, 2800: 1409, 3800: 1874}  # Dai et al. (2019), Table 9
EVAL_LENS = (128, 512, 800, 1800, 2800, 3800)


def train_config(quick: bool) -> ModelConfig:
    """The issue's config (d_model 256, 6 layers, 8 heads, L = M = 128); --quick: a small one."""
    if quick:
        return ModelConfig(n_layer=2, n_head=4, d_head=32, d_model=128, d_inner=512,
                           seg_len=64, mem_len=64)
    return ModelConfig(n_layer=6, n_head=8, d_head=32, d_model=256, d_inner=1024,
                       seg_len=128, mem_len=128)


def train_flops_per_token(cfg: ModelConfig, xl: bool, batch: int) -> float:
    """Matmul FLOPs of one training step per segment token: 3 x forward (backward = 2 x forward).

    Per layer and segment token (L queries, K = M + L keys, C = d_model, HD = H * D, F = d_inner):
        queries 2 C HD; keys and values 2 * 2 (K/L) C HD; output 2 HD C; feed-forward 2 * 2 C F;
        attention scores 2 K HD and probabilities x values 2 K HD, all K keys counted (the
        kernels compute the masked entries too); XL adds (b)+(d): 2 (K+1) HD, and W_kr R:
        2 K C HD / (B L) (one per segment, shared by the batch; B from the bench's batch).
    Plus the output softmax layer 2 C V. Embedding lookups, norms, softmax etc. are not counted.
    """
    C, HD, F, V, L = cfg.d_model, cfg.n_head * cfg.d_head, cfg.d_inner, cfg.vocab_size, cfg.seg_len
    M = cfg.mem_len if xl else 0
    K = M + L
    layer = 2 * C * HD + 4 * (K / L) * C * HD + 2 * HD * C + 4 * C * F + 4 * K * HD
    if xl:
        layer += 2 * (K + 1) * HD + 2 * K * C * HD / (batch * L)
    return 3 * (cfg.n_layer * layer + 2 * C * V)


class PeakMemory:
    """Peak memory of a stretch of code, in MiB: CUDA allocator peak, or peak RSS on a CPU."""

    def __init__(self, device: torch.device):
        self.device = device

    def reset(self) -> None:
        if self.device.type == "cpu":
            _malloc_trim()  # hand freed memory back first, so that RSS is what is in use
        self.base = self._now()  # what was already in use: peak - base is this stretch's rise
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            try:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")  # resets VmHWM to the current RSS (Linux)
            except OSError:
                pass

    def _status(self, field: str) -> float:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(field):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def _now(self) -> float:
        if self.device.type == "cuda":
            return torch.cuda.memory_allocated(self.device) / 2**20
        return self._status("VmRSS:")

    def peak_mib(self) -> float:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated(self.device) / 2**20
        return self._status("VmHWM:")


def _malloc_trim() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the RSS peaks then include freed memory the allocator kept


def matmul_flops(device: torch.device, n: int, reps: int) -> tuple[float, float]:
    """FLOP/s of an n x n @ n x n float32 matmul, the practical ceiling: (per wall-clock second,
    per CPU second of this process), each the best of `reps` calls."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    best, best_cpu = float("inf"), float("inf")
    for _ in range(reps + 1):  # the first call warms up
        _sync(device)
        t, c = time.perf_counter(), time.process_time()
        torch.mm(a, b)
        _sync(device)
        best, best_cpu = min(best, time.perf_counter() - t), min(best_cpu, time.process_time() - c)
    return 2 * n**3 / best, 2 * n**3 / max(best_cpu, 1e-9)


class Trainer:
    """One model, its optimizer and its memory; `step()` trains on one random batch."""

    def __init__(self, model, cfg, batch, device, amp, compile_):
        torch.manual_seed(0)
        self.model = model.to(device).train()
        self.fn = torch.compile(self.model) if compile_ else self.model
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.cfg, self.B, self.device, self.amp = cfg, batch, device, amp
        self.mems = None
        self.x = torch.randint(0, cfg.vocab_size, (batch, cfg.seg_len + 1), device=device)

    def step(self):
        with self.amp():
            out = self.fn(self.x[:, :-1], self.x[:, 1:], mems=self.mems)
        self.mems = out.mems or None
        self.opt.zero_grad(set_to_none=True)
        out.loss.backward()
        self.opt.step()


def bench_training(cfg, batch, device, rounds, steps, amp, compile_, progress):
    """Interleaved rounds of `steps` steps per model -> per model: tokens/s, peak memory."""
    models = {
        "xl_fast": (TransformerXL(cfg.replace(fast_attn=True)), True),
        "xl_reference": (TransformerXL(cfg.replace(fast_attn=False)), True),
        "vanilla": (VanillaTransformer(cfg.replace(fast_attn=True)), False),
    }
    trainers = {k: Trainer(m, cfg, batch, device, amp, compile_) for k, (m, _) in models.items()}
    mem = PeakMemory(device)
    rates = {k: [] for k in trainers}  # tokens per wall-clock second
    cpu_rates = {k: [] for k in trainers}  # tokens per CPU second of this process
    peaks = {k: 0.0 for k in trainers}
    rises = {k: 0.0 for k in trainers}
    for tr in trainers.values():  # warm-up (fills the memory, compiles)
        for _ in range(2):
            tr.step()
    bar = tqdm(total=rounds * len(trainers), desc="training", disable=not progress)
    for _ in range(rounds):
        for name, tr in trainers.items():
            mem.reset()
            _sync(device)
            t, c = time.perf_counter(), time.process_time()
            for _ in range(steps):
                tr.step()
            _sync(device)
            rates[name].append(steps * batch * cfg.seg_len / (time.perf_counter() - t))
            cpu_rates[name].append(steps * batch * cfg.seg_len / (time.process_time() - c))
            peaks[name] = max(peaks[name], mem.peak_mib())
            rises[name] = max(rises[name], mem.peak_mib() - mem.base)
            bar.update()
    bar.close()
    res = {}
    for name, (_, xl) in models.items():
        fl = train_flops_per_token(cfg, xl, batch)
        tps = statistics.median(rates[name])
        res[name] = {"tokens_per_s": tps, "tokens_per_s_all": rates[name],
                     "tokens_per_cpu_s": statistics.median(cpu_rates[name]),
                     "flops_per_token": fl, "flop_per_s": tps * fl, "peak_mem_mib": peaks[name],
                     "peak_rise_mib": rises[name],
                     "params": trainers[name].model.num_params()}
    return res


def memory_flatness(device, n_short, n_long, amp, progress):
    """Peak memory after n_short vs n_long evaluated segments of a small XL model."""
    cfg = ModelConfig(n_layer=2, n_head=2, d_head=16, d_model=32, d_inner=64, seg_len=32,
                      mem_len=64, dropout=0.0)
    model = TransformerXL(cfg).to(device).eval()
    mem = PeakMemory(device)
    x = torch.randint(0, cfg.vocab_size, (4, cfg.seg_len), device=device)
    mems, peaks = None, {}
    with torch.inference_mode(), amp():
        for _ in range(3):  # warm-up: allocator and memory reach their steady state
            mems = model(x, mems=mems).mems
        mem.reset()
        for i in tqdm(range(1, n_long + 1), desc="long evaluation", disable=not progress):
            mems = model(x, mems=mems).mems
            if i in (n_short, n_long):
                _sync(device)
                peaks[i] = mem.peak_mib()
    return {"segments_short": n_short, "segments_long": n_long,
            "peak_short_mib": peaks[n_short], "peak_long_mib": peaks[n_long],
            "ratio": peaks[n_long] / peaks[n_short]}


def bench_eval(lens, device, amp_dtype, quick, progress):
    """Table 9 rows from txl_mini.speed.eval_speed (book widths), one length at a time."""
    from .config import preset
    from .speed import eval_speed  # the one shared implementation (chapter 6)

    cfg = preset("book")
    mem = PeakMemory(device)
    rows = []
    for A in tqdm(lens, desc="evaluation speed", disable=not progress):
        mem.reset()
        row = eval_speed(cfg, [A], batch_size=1, n_predict=64 if quick else 256,
                         n_windows=2 if quick else 5, device=device, amp_dtype=amp_dtype)[0]
        row["peak_mem_mib"] = mem.peak_mib()
        row["peak_rise_mib"] = mem.peak_mib() - mem.base
        row["paper_speedup"] = PAPER_SPEEDUP.get(A)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small smoke run (< 60 s on a CPU)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--batch", type=int, default=16, help="training batch size")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds")
    ap.add_argument("--steps", type=int, default=None, help="training steps per round")
    ap.add_argument("--max-attn-len", type=int, default=None,
                    help="longest evaluation attention length (default 3800; --quick: 1024)")
    ap.add_argument("--long-segments", type=int, default=2000,
                    help="segments of the memory-flatness evaluation")
    ap.add_argument("--compile", action="store_true", help="torch.compile the training models")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    try:
        device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device cuda but CUDA is not available")
    except (RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if min(args.threads, args.batch, args.long_segments) < 1 or args.long_segments < 20:
        print("error: --threads, --batch must be >= 1 and --long-segments >= 20", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    amp_dtype = torch.bfloat16 if device.type == "cuda" else None  # bf16 autocast on CUDA

    def amp():
        return torch.autocast("cuda", dtype=amp_dtype) if amp_dtype else nullcontext()

    progress = not args.no_progress
    cfg = train_config(args.quick)
    batch = 4 if args.quick else args.batch
    rounds = args.rounds or (2 if args.quick else 5)
    steps = args.steps or (2 if args.quick else 3)
    max_len = args.max_attn_len or (1024 if args.quick else max(EVAL_LENS))
    lens = [a for a in EVAL_LENS if a <= max_len]
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else _cpu_name()
    print(f"device: {device} ({name}), torch threads: {torch.get_num_threads()}, "
          f"autocast: {amp_dtype}, compile: {args.compile}")

    t0 = time.perf_counter()
    n = 512 if args.quick else 1024
    ceil1 = matmul_flops(device, n, 3 if args.quick else 5)
    # smallest memory needs first, so that every peak-memory reading starts from a low RSS
    flat = memory_flatness(device, 20, args.long_segments, amp, progress)
    evals = bench_eval(lens, device, amp_dtype, args.quick, progress)
    train = bench_training(cfg, batch, device, rounds, steps, amp, args.compile, progress)
    ceil2 = matmul_flops(device, n, 3)
    ceiling, ceiling_cpu = max(ceil1[0], ceil2[0]), max(ceil1[1], ceil2[1])  # best of both

    fast, ref, van = (train[k]["tokens_per_s"] for k in ("xl_fast", "xl_reference", "vanilla"))
    cpu = {k: v["tokens_per_cpu_s"] for k, v in train.items()}
    result = {
        "device": str(device), "device_name": name, "threads": torch.get_num_threads(),
        "torch": torch.__version__, "autocast": str(amp_dtype), "compile": args.compile,
        "quick": args.quick, "train_config": cfg.__dict__, "batch": batch,
        "train": train,
        "ratios": {"fast_over_reference": fast / ref,
                   "xl_step_over_vanilla_step": van / fast,
                   "fast_over_reference_cpu": cpu["xl_fast"] / cpu["xl_reference"],
                   "xl_step_over_vanilla_step_cpu": cpu["vanilla"] / cpu["xl_fast"]},
        "matmul_flop_per_s": ceiling, "matmul_flop_per_cpu_s": ceiling_cpu,
        "mfu": {k: v["flop_per_s"] / ceiling for k, v in train.items()},
        "mfu_cpu_time": {k: v["tokens_per_cpu_s"] * v["flops_per_token"] / ceiling_cpu
                         for k, v in train.items()},
        "eval": evals, "memory_flatness": flat,
        "seconds": time.perf_counter() - t0,
    }
    print(format_report(result))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.json)  # never a half-written file
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def format_report(r: dict) -> str:
    """The bench's results as text tables (also pasted into the README's Performance section)."""
    c = r["train_config"]
    lines = [f"training: d_model {c['d_model']}, {c['n_layer']} layers, {c['n_head']} heads, "
             f"L = M = {c['seg_len']}, batch {r['batch']}",
             f"{'model':<14}{'tokens/s':>10}{'tokens/CPU s':>14}{'GFLOP/s':>9}{'MFU':>7}"
             f"{'peak MiB':>10}{'rise':>7}"]
    for k, v in r["train"].items():
        lines.append(f"{k:<14}{v['tokens_per_s']:>10.0f}{v['tokens_per_cpu_s']:>14.0f}"
                     f"{v['flop_per_s'] / 1e9:>9.2f}{r['mfu'][k]:>7.1%}{v['peak_mem_mib']:>10.0f}"
                     f"{v['peak_rise_mib']:>7.0f}")
    ra = r["ratios"]
    lines.append(f"fast / reference: {ra['fast_over_reference']:.2f}x wall, "
                 f"{ra['fast_over_reference_cpu']:.2f}x CPU time; XL step / vanilla step: "
                 f"{ra['xl_step_over_vanilla_step']:.2f}x wall, "
                 f"{ra['xl_step_over_vanilla_step_cpu']:.2f}x CPU time")
    mc = r["mfu_cpu_time"]
    lines.append(f"matmul ceiling {r['matmul_flop_per_s'] / 1e9:.1f} GFLOP/s wall, "
                 f"{r['matmul_flop_per_cpu_s'] / 1e9:.1f} per CPU s; MFU by CPU time: "
                 + ", ".join(f"{k} {v:.1%}" for k, v in mc.items()))
    lines.append("evaluation (book widths), seconds per predicted character:")
    lines.append(f"{'attn len':>8}{'XL ms/char':>12}{'vanilla ms/char':>17}{'speed-up':>10}"
                 f"{'paper':>8}{'peak MiB':>10}{'rise':>7}")
    for e in r["eval"]:
        paper = f"{e['paper_speedup']}x" if e["paper_speedup"] else "-"
        lines.append(f"{e['attn_len']:>8}{1e3 * e['xl_s_per_char']:>12.4f}"
                     f"{1e3 * e['vanilla_s_per_char']:>17.3f}{e['speedup']:>9.0f}x{paper:>8}"
                     f"{e['peak_mem_mib']:>10.0f}{e['peak_rise_mib']:>7.0f}")
    f = r["memory_flatness"]
    lines.append(f"memory flatness: peak {f['peak_long_mib']:.1f} MiB after {f['segments_long']} "
                 f"segments vs {f['peak_short_mib']:.1f} MiB after {f['segments_short']} "
                 f"({f['ratio']:.3f}x)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
