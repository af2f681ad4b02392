"""Long training runs: run directory, checkpoints, exact resume, signals, DDP (chapter 6).

`python -m txl_mini.train` parses and validates its options (txl_mini.trainopts) and calls
`run` here. A run directory holds everything about one run:

    config.json    the options, the model config and the corpus (name, size, sha1)
    metrics.jsonl  one JSON object per logged step / validation
    curves.png     training and validation bpc (if matplotlib is installed)
    last.pt        the latest checkpoint: model, optimizer, RNG states, data position, memory
    best.pt        the weights with the lowest validation bpc so far

Resuming restores all of last.pt, so N steps straight and N/2 + interrupt + N/2 resumed give
bitwise-identical weights on the CPU (tests/test_train_cli.py checks it).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from dataclasses import asdict

import torch
import torch.distributed as dist
from tqdm import tqdm

from .checkpoint import read_checkpoint, build_model, save_checkpoint, unwrap
from .config import ModelConfig
from .data import batchify
from .evaluate import bits_per_char, evaluate_segments
from .train import NonFiniteLoss, TrainConfig, lr_at, train_step

FILES = ("config.json", "metrics.jsonl", "curves.png", "last.pt", "best.pt")


class RunError(Exception):
    """A problem with the run (options, directory, corpus); main prints it as one line."""


class Stop(Exception):
    """The run ends early; `code` is the exit status, the message the one line to print."""

    def __init__(self, msg: str, code: int):
        super().__init__(msg)
        self.code = code


def rank_world() -> tuple[int, int]:
    return (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)


def sha1_tokens(tokens: torch.Tensor) -> str:
    return hashlib.sha1(tokens.to(torch.uint8).numpy().tobytes()).hexdigest()


def _rng_state(device: torch.device) -> dict:
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict, device: torch.device) -> None:
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


class Run:
    """The state of one training run and everything that saves, restores and advances it."""

    def __init__(self, args, cfg: ModelConfig, tc: TrainConfig, tokens: torch.Tensor,
                 valid: torch.Tensor, corpus: dict, device: torch.device, vanilla: bool):
        from .model import TransformerXL, VanillaTransformer

        self.args, self.tc, self.corpus, self.device = args, tc, corpus, device
        self.rank, self.world = rank_world()
        self.dir = args.run_dir
        torch.manual_seed(tc.seed)  # the same initial weights on every rank
        model = (VanillaTransformer if vanilla else TransformerXL)(cfg).to(device)
        streams = batchify(tokens, tc.batch_size)  # (B, T): all streams, every rank the same
        per_rank = tc.batch_size // self.world
        self.streams = streams[self.rank * per_rank:(self.rank + 1) * per_rank].to(device)
        self.valid = valid
        self.step, self.pos, self.mems, self.best = 0, 0, None, float("inf")
        self.history: list[dict] = []
        if args.resume:
            model = self._restore(model)
        else:
            torch.manual_seed(tc.seed + self.rank)  # dropout differs between ranks
        self.model = model
        self.ddp = model
        if self.world > 1:
            ids = [device.index] if device.type == "cuda" else None
            self.ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
        self.opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
        if self._opt_state is not None:
            self.opt.load_state_dict(self._opt_state)
        self.autocast = None
        if device.type == "cuda" and args.precision == "bf16":
            self.autocast = torch.autocast("cuda", dtype=torch.bfloat16)

    # -- checkpoints -----------------------------------------------------------------------
    def _restore(self, model):
        ckpt = read_checkpoint(os.path.join(self.dir, "last.pt"), self.device)
        extra = ckpt["extra"] or {}
        ranks = extra.get("ranks", [])
        if len(ranks) != self.world:
            raise RunError(f"{self.dir} was trained with {len(ranks)} process(es); resume it "
                           f"with the same number (now {self.world})")
        model = build_model(ckpt, os.path.join(self.dir, "last.pt"), self.device).train()
        mine = ranks[self.rank]
        self.step, self.pos, self.best = extra["step"], extra["pos"], extra["best"]
        self.mems = [m.to(self.device) for m in mine["mems"]] or None
        self._opt_state = ckpt["optimizer"]
        self.history = [h for h in _read_metrics(self.dir) if h["step"] <= self.step]
        _set_rng_state(mine["rng"], self.device)
        return model

    _opt_state = None

    def meta(self) -> dict:
        a = self.args
        return {"corpus": self.corpus["name"], "corpus_path": self.corpus["path"],
                "corpus_sha1": self.corpus["sha1"],
                "offline_chars": a.offline_chars, "preset": a.preset, "steps": self.step,
                "train_config": asdict(self.tc), "best_val_bpc": _finite_or_none(self.best)}

    def save(self, name: str = "last.pt", with_state: bool = True) -> None:
        """Checkpoint; every rank contributes its memory and RNG, rank 0 writes the file."""
        mine = {"mems": [m.detach().cpu() for m in (self.mems or [])],
                "rng": _rng_state(self.device)}
        ranks = [mine]
        if self.world > 1:
            ranks = [None] * self.world
            dist.all_gather_object(ranks, mine)
        if self.rank != 0:
            return
        extra = {"step": self.step, "pos": self.pos, "best": _finite_or_none(self.best),
                 "ranks": ranks} if with_state else None
        save_checkpoint(os.path.join(self.dir, name), self.model, self.meta(),
                        optimizer=self.opt if with_state else None, extra=extra)
        if name == "last.pt" and self.args.out and self.step == self.tc.steps:
            save_checkpoint(self.args.out, self.model, self.meta())

    # -- logging ---------------------------------------------------------------------------
    def log(self, record: dict) -> None:
        self.history.append(record)
        if self.rank == 0:
            with open(os.path.join(self.dir, "metrics.jsonl"), "a") as f:
                f.write(json.dumps(record) + "\n")

    def validate(self) -> float:
        from contextlib import nullcontext

        with self.autocast if self.autocast is not None else nullcontext():
            res = evaluate_segments(self.model, self.valid, batch_size=min(8, len(self.valid) // 2))
        self.model.train()
        self.log({"step": self.step, "val_bpc": res.bpc})
        return res.bpc

    # -- the loop --------------------------------------------------------------------------
    def segment(self):
        """(x, y) at the current data position; a finished pass starts over with empty memory."""
        L, T = self.model.cfg.seg_len, self.streams.shape[1]
        if self.pos >= T - 1:
            self.pos, self.mems = 0, None
        n = min(L, T - 1 - self.pos)
        x = self.streams[:, self.pos:self.pos + n].contiguous()  # (B, l)
        y = self.streams[:, self.pos + 1:self.pos + 1 + n].contiguous()  # (B, l)
        return x, y

    def _agree(self, flag) -> bool:
        """True if `flag` holds on any rank: every rank then stops at the same step."""
        if self.world == 1:
            return bool(flag)
        t = torch.tensor([float(bool(flag))], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    def train(self, stop_flag: dict, on_step=None) -> None:
        tc, a = self.tc, self.args
        self.model.train()
        bar = tqdm(total=tc.steps, initial=self.step, desc="train",
                   disable=a.quiet or self.rank != 0, dynamic_ncols=True)
        t0, tokens_seen = time.perf_counter(), 0
        try:
            while self.step < tc.steps:
                if self._agree(bool(stop_flag.get("signal"))):
                    stop_flag.setdefault("signal", "SIGTERM")  # another rank got it
                    self.save()
                    if self.rank == 0:
                        plot_curves(self.dir, self.history)
                    name = stop_flag["signal"]
                    raise Stop(f"{name}: saved {self.dir}/last.pt at step {self.step}/"
                               f"{tc.steps}; continue with --resume {self.dir}",
                               128 + getattr(signal, name))
                x, y = self.segment()
                try:
                    out = train_step(self.ddp, self.opt, x, y, self.mems, lr_at(self.step, tc),
                                     tc.clip, self.autocast,
                                     check_finite=lambda t: not self._agree(not torch.isfinite(t)))
                except NonFiniteLoss as e:
                    good = os.path.join(self.dir, "last.pt")
                    kept = (f"last good checkpoint {good} kept" if os.path.exists(good)
                            else "no checkpoint was written yet")
                    raise Stop(f"error: {e} at step {self.step + 1}; stopped, {kept}", 1) from None
                self.mems = out.mems or None
                self.pos += x.shape[1]
                self.step += 1
                tokens_seen += x.numel() * self.world
                loss = out.loss.item()
                rate = tokens_seen / max(time.perf_counter() - t0, 1e-9)
                if self.step % a.log_every == 0 or self.step == tc.steps:
                    self.log({"step": self.step, "loss": loss, "bpc": bits_per_char(loss),
                              "lr": lr_at(self.step - 1, tc), "tokens_per_s": round(rate, 1)})
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.3f}", bpc=f"{bits_per_char(loss):.3f}",
                                tok_s=f"{rate:,.0f}", refresh=False)
                final = self.step == tc.steps
                if (a.eval_every and self.step % a.eval_every == 0) or final:
                    bpc = self.validate()
                    if bpc < self.best:
                        self.best = bpc
                        self.save("best.pt", with_state=False)
                if self.step % a.save_every == 0 or final:
                    self.save()
                if final and self.rank == 0:
                    plot_curves(self.dir, self.history)
                if on_step is not None and on_step(self.step):  # tests: simulated interrupt
                    stop_flag["signal"] = "SIGINT"
        finally:
            bar.close()


def _finite_or_none(x: float):
    return x if x != float("inf") else None


def _read_metrics(run_dir: str) -> list[dict]:
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut off by a crash
                break
    return out


def rewrite_metrics(run_dir: str, history: list[dict]) -> None:
    """Drop lines logged after the checkpoint we resume from (a crash can leave some)."""
    path = os.path.join(run_dir, "metrics.jsonl")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(json.dumps(h) + "\n" for h in history)
    os.replace(tmp, path)


def plot_curves(run_dir: str, history: list[dict]) -> bool:
    """curves.png: training and validation bpc by step; False (and no file) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    train = [(h["step"], h["bpc"]) for h in history if "bpc" in h]
    valid = [(h["step"], h["val_bpc"]) for h in history if "val_bpc" in h]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    if train:
        ax.plot(*zip(*train), label="train (one segment)", lw=1)
    if valid:
        ax.plot(*zip(*valid), "o-", label="validation", lw=1.5)
    ax.set_xlabel("step")
    ax.set_ylabel("bits per character")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = os.path.join(run_dir, ".curves.png.tmp")
    fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
    os.replace(tmp, os.path.join(run_dir, "curves.png"))
    return True


def install_signal_handlers(stop_flag: dict) -> dict:
    """SIGINT / SIGTERM only set a flag; the loop saves and exits after the current step."""
    def handler(signum, frame):
        stop_flag["signal"] = signal.Signals(signum).name

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        old[sig] = signal.signal(sig, handler)
    return old


def main(argv=None, on_step=None) -> int:
    """`python -m txl_mini.train`; returns the exit status. `on_step(step) -> True` requests a
    stop like Ctrl-C does (tests use it to interrupt at an exact step)."""
    import sys

    from . import trainopts as o
    from .checkpoint import CheckpointError
    from .data import DataError, load_corpus_split

    argv = sys.argv[1:] if argv is None else list(argv)
    args = o.build_parser().parse_args(argv)
    created: list[str] = []
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    try:
        if args.resume:
            o.restore_options(args, argv)
        o.check_values(args)
        if args.threads:
            torch.set_num_threads(args.threads)
        cfg = o.model_config(args)
        device = o.pick_device(args.device, int(os.environ.get("LOCAL_RANK", "0")))
        if distributed and not dist.is_initialized():
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = rank_world()
        if args.batch_size % world:
            raise o.UsageError(f"--batch-size {args.batch_size} must be divisible by the "
                               f"{world} processes")
        need, detail = o.memory_estimate(cfg, args.batch_size // world, args.vanilla)
        have = o.memory_available(device)
        if need > have:
            raise o.UsageError(f"this run needs roughly {need / 2**30:,.1f} GiB ({detail}), more "
                               f"than the {have / 2**30:,.1f} GiB of {device.type} memory here; "
                               "lower --batch-size, --seg-len or --mem-len")
        if rank == 0:
            o.prepare_run_dir(args, created)
        else:
            args.run_dir = args.resume or args.run_dir or os.path.splitext(args.out)[0]
        tokens = load_corpus_split(args.corpus, "train", args.path, args.offline_chars)
        valid = load_corpus_split(args.corpus, "valid", args.path, args.offline_chars)
        valid = valid[:args.eval_chars]
        T = len(tokens) // args.batch_size
        if T < cfg.seg_len + 1 or len(valid) < 2:
            raise o.UsageError(f"the training split has {len(tokens):,} chars: "
                               f"{args.batch_size} streams of {T:,}, too short for segments of "
                               f"{cfg.seg_len} (need > {cfg.seg_len} per stream); lower "
                               "--batch-size or --seg-len, or use a longer corpus")
        corpus = {"name": args.corpus, "path": args.path, "chars": len(tokens),
                  "sha1": sha1_tokens(tokens)}
        if args.resume:
            with open(os.path.join(args.run_dir, "config.json")) as f:
                was = json.load(f)["corpus"]
            if was["sha1"] != corpus["sha1"]:
                raise RunError(f"the corpus differs from the one {args.run_dir} was trained on "
                               f"(sha1 {corpus['sha1'][:12]} vs {was['sha1'][:12]})")
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         warmup=args.warmup, clip=args.clip, seed=args.seed)
        run = Run(args, cfg, tc, tokens, valid, corpus, device, args.vanilla)
        if rank == 0:
            if args.resume:
                rewrite_metrics(run.dir, run.history)
            else:
                _write_json(os.path.join(run.dir, "config.json"),
                            {"args": vars(args), "model": asdict(run.model.cfg),
                             "model_class": type(run.model).__name__, "corpus": corpus,
                             "world_size": world})
            print(f"corpus: {args.corpus}{' (' + args.path + ')' if args.path else ''}, "
                  f"{len(tokens):,} training chars; device: {device} x {world}; "
                  f"{type(run.model).__name__} with {run.model.num_params():,} parameters; "
                  f"run dir: {run.dir}" + (f"; resuming at step {run.step}" if args.resume
                                           else ""), flush=True)
        stop_flag: dict = {}
        old = install_signal_handlers(stop_flag)
        try:
            run.train(stop_flag, on_step)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
        if rank == 0:
            best = _finite_or_none(run.best)
            print(f"trained {tc.steps} steps; validation {run.history[-1].get('val_bpc', 0):.3f}"
                  f" bpc on {len(valid):,} {args.corpus} chars (best {best:.3f}); wrote "
                  f"{run.dir}/last.pt and best.pt" + (f" and {args.out}" if args.out else ""))
            if not os.path.exists(os.path.join(run.dir, "curves.png")):
                print("note: matplotlib is not installed, so no curves.png was drawn")
        return 0
    except Stop as e:
        print(str(e), file=sys.stderr if e.code == 1 else sys.stdout, flush=True)
        return e.code
    except KeyboardInterrupt:
        _remove_created(created)
        return o.fail("interrupted before training started; nothing was saved", 130)
    except o.UsageError as e:
        _remove_created(created)
        return o.fail(f"error: {e}")
    except (RunError, DataError, CheckpointError, ValueError) as e:
        _remove_created(created)
        return o.fail(f"error: {e}", 1)
    finally:
        if distributed and dist.is_initialized():
            dist.destroy_process_group()


def _write_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def _remove_created(created: list) -> None:
    """A run that fails before training leaves no empty directory behind."""
    for d in reversed(created):
        try:
            os.rmdir(d)  # only if still empty
        except OSError:
            pass
