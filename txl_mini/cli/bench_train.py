"""Training throughput and model FLOP utilisation for `python -m txl_mini bench`.

- training tokens/s of TransformerXL with the fast path, with the readable path
  (`fast_attn=False`, the code chapters 3-5 render) and of the vanilla baseline of the
  same size and segment length, timed in interleaved rounds so that load from other
  processes hits all three alike; the ratios are taken between medians of the same run;
- the FLOPs of a training step (`train_flops_per_token`) and the practical ceiling they
  are divided by (`matmul_flops`, a large square matmul timed in the same run), both per
  wall-clock second and per CPU second of this process (which other processes sharing
  the CPU inflate much less).
"""

from __future__ import annotations

import statistics
import time

import torch
from tqdm import tqdm

from ..config import ModelConfig
from ..model import TransformerXL, VanillaTransformer
from ..speed import synchronize
from ..train import train_step
from .peakmem import PeakMemory


def train_config(quick: bool) -> ModelConfig:
    """The issue's config (d_model 256, 6 layers, 8 heads, L = M = 128); --quick: a
    small one."""
    if quick:
        return ModelConfig(n_layer=2, n_head=4, d_head=32, d_model=128, d_inner=512,
                           seg_len=64, mem_len=64)
    return ModelConfig(n_layer=6, n_head=8, d_head=32, d_model=256, d_inner=1024,
                       seg_len=128, mem_len=128)


def train_flops_per_token(cfg: ModelConfig, xl: bool, batch: int) -> float:
    """Matmul FLOPs of one training step per segment token: 3 x forward (backward = 2 x
    forward).

    Per layer and segment token (L queries, K = M + L keys, C = d_model, HD = H * D,
    F = d_inner):
        queries 2 C HD; keys and values 2 * 2 (K/L) C HD; output 2 HD C; feed-forward
        2 * 2 C F; attention scores 2 K HD and probabilities x values 2 K HD, all K keys
        counted (the kernels compute the masked entries too); XL adds (b)+(d):
        2 (K+1) HD, and W_kr R: 2 K C HD / (B L) (one per segment, shared by the batch;
        B from the bench's batch).
    Plus the output softmax layer 2 C V. Embedding lookups, norms, softmax etc. are not
    counted.
    """
    C, HD, F = cfg.d_model, cfg.n_head * cfg.d_head, cfg.d_inner
    V, L = cfg.vocab_size, cfg.seg_len
    M = cfg.mem_len if xl else 0
    K = M + L
    layer = 2 * C * HD + 4 * (K / L) * C * HD + 2 * HD * C + 4 * C * F + 4 * K * HD
    if xl:
        layer += 2 * (K + 1) * HD + 2 * K * C * HD / (batch * L)
    return 3 * (cfg.n_layer * layer + 2 * C * V)


def matmul_flops(device: torch.device, n: int, reps: int) -> tuple[float, float]:
    """FLOP/s of an n x n @ n x n float32 matmul, the practical ceiling: (per wall-clock
    second, per CPU second of this process), each the best of `reps` calls."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    best, best_cpu = float("inf"), float("inf")
    for _ in range(reps + 1):  # the first call warms up
        synchronize(device)
        t, c = time.perf_counter(), time.process_time()
        torch.mm(a, b)
        synchronize(device)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
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
        self.x = torch.randint(0, cfg.vocab_size, (batch, cfg.seg_len + 1),
                               device=device)

    def step(self):
        """One update through the training loop's own train_step (chapter 6)."""
        out = train_step(self.fn, self.opt, self.x[:, :-1], self.x[:, 1:], self.mems,
                         lr=1e-4, clip=0.25, autocast=self.amp())
        self.mems = out.mems or None


def training_models(cfg: ModelConfig) -> dict:
    """The three models the bench trains: {name: (model, is_xl)}, the same size and
    L."""
    return {
        "xl_fast": (TransformerXL(cfg.replace(fast_attn=True)), True),
        "xl_readable": (TransformerXL(cfg.replace(fast_attn=False)), True),
        "vanilla": (VanillaTransformer(cfg.replace(fast_attn=True)), False),
    }


def bench_training(cfg, batch, device, rounds, steps, amp, compile_, progress):
    """Interleaved rounds of `steps` steps per model -> per model: tokens/s, peak
    memory."""
    models = training_models(cfg)
    trainers = {k: Trainer(m, cfg, batch, device, amp, compile_)
                for k, (m, _) in models.items()}
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
            synchronize(device)
            t, c = time.perf_counter(), time.process_time()
            for _ in range(steps):
                tr.step()
            synchronize(device)
            rates[name].append(steps * batch * cfg.seg_len / (time.perf_counter() - t))
            cpu_rates[name].append(steps * batch * cfg.seg_len
                                   / (time.process_time() - c))
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
                     "flops_per_token": fl, "flop_per_s": tps * fl,
                     "peak_mem_mib": peaks[name], "peak_rise_mib": rises[name],
                     "params": trainers[name].model.num_params()}
    return res
