"""Training throughput and model FLOP utilisation for `python -m txl_mini bench`.

- training tokens/s of TransformerXL with the fast path, with the readable path
  (`fast_attn=False`, the code chapters 3-5 render) and of the vanilla baseline of the
  same size and segment length, timed in interleaved rounds so that load from other
  processes hits all three alike; the ratios are taken between medians of the same run;
- the FLOPs of a training step (`train_flops_per_token`) and the practical ceiling they
  are divided by (`matmul_flops`, a large square matmul timed in the same run), both per
  wall-clock second and per CPU second of this process (which other processes sharing
  the CPU inflate much less);
- peak memory of a stretch of code (`PeakMemory`, which the evaluation timings use too):
  torch.cuda.max_memory_allocated on CUDA; on a CPU the process's peak resident set
  (VmHWM, reset through /proc/self/clear_refs after malloc_trim at each `reset()`).
  "rise" is the peak minus what was in use when the measurement began.
"""

from __future__ import annotations

import ctypes
import statistics
import time

import torch
from tqdm import tqdm

from ..config import ModelConfig
from ..model import TransformerXL, VanillaTransformer
from ..speed import synchronize
from ..train import train_step
from .errors import CompileFailed, out_of_memory


class PeakMemory:
    """Peak memory of a stretch of code, in MiB, from `reset()` on."""

    def __init__(self, device: torch.device):
        self.device, self.cuda = device, device.type == "cuda"

    def reset(self) -> None:
        # self.base: what was already in use; peak - base is this stretch's rise
        if self.cuda:
            self.base = torch.cuda.memory_allocated(self.device) / 2**20
            torch.cuda.reset_peak_memory_stats(self.device)
            return
        try:  # hand freed memory back first, so that RSS is what is in use
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass  # not glibc: the RSS peaks then include freed memory it kept
        self.base = _proc_status("VmRSS:")
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
                f.write("5")  # resets VmHWM to the current RSS (Linux)
        except OSError:
            pass

    def peak_mib(self) -> float:
        if self.cuda:
            return torch.cuda.max_memory_allocated(self.device) / 2**20
        return _proc_status("VmHWM:")

    def rise_mib(self) -> float:
        return self.peak_mib() - self.base


def _proc_status(field: str) -> float:
    """A memory line of /proc/self/status in MiB; NaN where there is none."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


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
    counted, nor the up to 15 columns `fast_attention.padded` adds to (b)+(d).
    """
    C, HD, F = cfg.d_model, cfg.n_head * cfg.d_head, cfg.d_inner
    V, L = cfg.vocab_size, cfg.seg_len
    M = cfg.mem_len if xl else 0
    K = M + L
    layer = 2 * C * HD + 4 * (K / L) * C * HD + 2 * HD * C + 4 * C * F + 4 * K * HD
    if xl:
        layer += 2 * (K + 1) * HD + 2 * K * C * HD / (batch * L)
    return 3 * (cfg.n_layer * layer + 2 * C * V)


def timed(fn, device: torch.device) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds of this process) of fn(), CUDA synchronised."""
    synchronize(device)
    t, c = time.perf_counter(), time.process_time()
    fn()
    synchronize(device)
    return time.perf_counter() - t, time.process_time() - c


def matmul_flops(device: torch.device, n: int, reps: int) -> tuple[float, float]:
    """FLOP/s of an n x n @ n x n float32 matmul, the practical ceiling: (per wall-clock
    second, per CPU second of this process), each the best of `reps` calls."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    times = [timed(lambda: torch.mm(a, b), device)
             for _ in range(reps + 1)]  # the first call warms up
    wall, cpu = (min(x) for x in zip(*times))
    return 2 * n**3 / wall, 2 * n**3 / max(cpu, 1e-9)


class Trainer:
    """One model, its optimizer and its memory; `step()` trains on one random batch."""

    def __init__(self, model, cfg, batch, device, amp, compile_):
        torch.manual_seed(0)
        self.model = model.to(device).train()
        # --compile is CUDA only (bench.check_args): on a CPU, torch 2.13's inductor
        # failed the vanilla model's first training step with 'invalid shape dimension
        # -2797994466021908009' (aot_autograd replaying an output alias), the same with
        # dynamic=False and one model alone, and once crashed; backend="aot_eager" ran
        self.fn = torch.compile(self.model) if compile_ else self.model
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.cfg, self.B, self.device, self.amp = cfg, batch, device, amp
        self.mems = None
        self.x = torch.randint(0, cfg.vocab_size, (batch, cfg.seg_len + 1),
                               device=device)

    def step(self, n: int = 1):
        """n updates through the training loop's own train_step."""
        for _ in range(n):
            out = train_step(self.fn, self.opt, self.x[:, :-1], self.x[:, 1:],
                             self.mems, lr=1e-4, clip=0.25, autocast=self.amp())
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
    for name, tr in trainers.items():  # warm-up (fills the memory, compiles)
        try:
            tr.step(2)
        except RuntimeError as e:  # dynamo's and inductor's errors are RuntimeErrors
            if not compile_ or out_of_memory(e):
                raise
            first = (str(e).strip().splitlines() or [""])[0][:200]
            raise CompileFailed(f"--compile: torch.compile failed in {name}'s first "
                                f"steps ({type(e).__name__}: {first}); drop --compile"
                                ) from None
    # per model and round: tokens per wall-clock second, tokens per CPU second of
    # this process, peak memory, its rise
    rounds_of = {k: [] for k in trainers}
    tokens = steps * batch * cfg.seg_len
    bar = tqdm(total=rounds * len(trainers), desc="training", disable=not progress)
    for _ in range(rounds):
        for name, tr in trainers.items():
            mem.reset()
            wall, cpu = timed(lambda: tr.step(steps), device)
            rounds_of[name].append((tokens / wall, tokens / cpu, mem.peak_mib(),
                                    mem.rise_mib()))
            bar.update()
    bar.close()
    res = {}
    for name, (_, xl) in models.items():
        wall, cpu, peak, rise = (list(x) for x in zip(*rounds_of[name]))
        fl = train_flops_per_token(cfg, xl, batch)
        tps = statistics.median(wall)
        res[name] = {"tokens_per_s": tps, "tokens_per_s_all": wall,
                     "tokens_per_cpu_s": statistics.median(cpu),
                     "flops_per_token": fl, "flop_per_s": tps * fl,
                     "peak_mem_mib": max(0.0, *peak), "peak_rise_mib": max(0.0, *rise),
                     "params": trainers[name].model.num_params()}
    return res


def device_name(device: torch.device) -> str:
    """The GPU's name, or the CPU's model name from /proc/cpuinfo ("cpu" without)."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"
