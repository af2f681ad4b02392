"""One training run: checkpoints, exact resume, signals, several processes.

`python -m txl_mini train` (cli/train.py) checks the options and builds a `Run`; its
files: cli/rundir.py and cli/metrics.py. Resuming restores all of last.pt: N steps,
or N/2 + a stop + N/2 resumed, give bitwise-identical weights on the CPU
(tests/test_train_cli.py).
"""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import asdict

import torch
import torch.distributed as dist
from tqdm import tqdm

from ..checkpoint import build_model, save_checkpoint
from ..config import ModelConfig
from ..data import batchify, segment_at
from ..evaluate import EvaluationStopped, bits_per_char, evaluate_segments
from ..model import TransformerXL, VanillaTransformer
from ..train import NonFiniteLoss, TrainConfig, lr_at, train_step
from .curves import plot_curves
from .ddp import any_rank, rank_world, rng_state, set_rng_state
from .leftover import KEPT, OUT_MADE, after_nan, go_on, in_run_dir
from .metrics import append_metrics, resumed_history
from .outputs import naming
from .saved import note_saved
from .stop import Stop, exit_code


class RunError(Exception):
    """A problem with the run (options, directory, corpus); printed as one line."""


class Run:
    """The state of one training run and all that saves, restores and advances it."""

    def __init__(self, args, cfg: ModelConfig, tc: TrainConfig, tokens: torch.Tensor,
                 valid: torch.Tensor, corpus: dict, device: torch.device,
                 last: dict | None = None, *, out_was):
        self.args, self.tc, self.corpus, self.device = args, tc, corpus, device
        self.rank, self.world = rank_world()
        self.dir, self.out_was = args.run_dir, out_was  # --out as it was checked
        torch.manual_seed(tc.seed)  # the same initial weights on every rank
        model = (VanillaTransformer if args.vanilla else TransformerXL)(cfg).to(device)
        streams = batchify(tokens, tc.batch_size)  # (B, T): all streams, every rank
        per_rank = tc.batch_size // self.world
        lo = self.rank * per_rank
        self.streams = streams[lo:lo + per_rank].to(device)  # (B / world, T)
        self.valid = valid
        self.step, self.pos, self.mems, self.best = 0, 0, None, float("inf")
        self.val_pending = False  # a validation was interrupted: redo it on resume
        self.history: list[dict] = []
        self.train_seconds, self.tokens_seen = 0.0, 0  # steps only: tokens/s
        if last is not None:
            model = self._restore(last)
        else:
            torch.manual_seed(tc.seed + self.rank)  # dropout differs between ranks
        self.model = self.ddp = model
        if self.world > 1:
            ids = [device.index] if device.type == "cuda" else None
            self.ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)
        self.opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
        if last is not None:
            self.opt.load_state_dict(last["optimizer"])
        bf16 = device.type == "cuda" and args.precision == "bf16"
        self.autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else None

    # -- checkpoints -------------------------------------------------------------------
    def _restore(self, ckpt: dict):
        """Everything of last.pt (read and checked by cli/train.py) for this rank."""
        extra = ckpt["extra"]
        ranks = extra.get("ranks", [])
        if len(ranks) != self.world:
            raise RunError(f"{self.dir} was trained with {len(ranks)} process(es); "
                           f"resume it with the same number (now {self.world})")
        path = os.path.join(self.dir, "last.pt")
        model = build_model(ckpt, path, self.device).train()
        mine = ranks[self.rank]
        self.step, self.pos = extra["step"], extra["pos"]
        self.best = float("inf") if extra["best"] is None else extra["best"]
        self.val_pending = bool(extra.get("val_pending"))
        self.mems = [m.to(self.device) for m in mine["mems"]] or None
        self.history = resumed_history(self.dir, self.step)
        set_rng_state(mine["rng"], self.device)
        return model

    def meta(self) -> dict:
        a = self.args
        return {"corpus": self.corpus["name"], "corpus_path": self.corpus["path"],
                "corpus_sha1": self.corpus["sha1"], "offline_chars": a.offline_chars,
                "preset": a.preset, "steps": self.step, "train_config": asdict(self.tc),
                "best_val_bpc": _finite_or_none(self.best)}

    def save(self, name: str = "last.pt", with_state: bool = True, out=False) -> None:
        """Checkpoint; every rank contributes its memory and RNG, rank 0 writes it."""
        mine = {"mems": [m.detach().cpu() for m in (self.mems or [])],
                "rng": rng_state(self.device)}
        ranks = [mine]
        if self.world > 1:
            ranks = [None] * self.world
            dist.all_gather_object(ranks, mine)
        if self.rank != 0:
            return
        extra = None
        if with_state:
            extra = {"step": self.step, "pos": self.pos,
                     "best": _finite_or_none(self.best),
                     "val_pending": self.val_pending, "ranks": ranks}
        path = in_run_dir(self.dir, name)  # still the folder we locked
        with naming(path):  # a full disk can surface in close(), which names no file
            save_checkpoint(path, self.model, self.meta(),
                            optimizer=self.opt if with_state else None, extra=extra)
        if name == "last.pt":  # a resume that finds none can tell it was deleted
            note_saved(self.dir, self.step)
        if out and self.args.out:  # the run's end only (a stop in its last validation
            KEPT[:] = OUT_MADE  # leaves it to resume); its folders kept from here on
            with naming(out := self.args.out):
                save_checkpoint(out, self.model, self.meta(), was=self.out_was)

    def stop(self, name: str) -> Stop:
        """Save last.pt (and the curves) and say how to continue."""
        self.save()
        if self.rank == 0:
            plot_curves(self.dir, self.history)
        return Stop(f"{name}: saved {self.dir}/last.pt at step {self.step}/"
                    f"{self.tc.steps}; {go_on(self.dir)}", exit_code(name))

    # -- logging -----------------------------------------------------------------------
    def log(self, record: dict) -> None:
        self.history.append(record)
        if self.rank == 0:
            append_metrics(self.dir, record)

    def validate(self, stop_flag: dict, bar) -> float:
        """Validation bpc; a signal stops it within a segment (saved; redone on
        resume, so the resumed run stays bitwise the uninterrupted one)."""
        def on_segment(done: int, total: int) -> bool:
            bar.set_postfix_str(f"validating {done}/{total}")
            return bool(stop_flag.get("signal"))

        self.val_pending = True
        stopped = False
        try:
            with self.autocast if self.autocast is not None else nullcontext():
                res = evaluate_segments(self.model, self.valid,
                                        batch_size=min(8, len(self.valid) // 2),
                                        on_segment=on_segment)
        except EvaluationStopped:
            stopped = True
        self.model.train()
        self._stop_if(stopped, stop_flag)
        self.val_pending = False
        self.log({"step": self.step, "val_bpc": res.bpc})
        return res.bpc

    # -- the loop ----------------------------------------------------------------------
    def segment(self):
        """(x, y) at the data position; a finished pass starts over, memory empty."""
        if self.pos >= self.streams.shape[1] - 1:
            self.pos, self.mems = 0, None
        return segment_at(self.streams, self.pos, self.model.cfg.seg_len)

    def _stop_if(self, flag, stop_flag: dict) -> None:
        """Every rank stops together, saved, if `flag` holds on any of them."""
        if any_rank(flag, self.device):
            stop_flag.setdefault("signal", "SIGTERM")  # another rank got it
            raise self.stop(stop_flag["signal"])

    def _mean_loss(self, loss: torch.Tensor) -> float:
        """The loss over all B streams (each rank has B / world of them)."""
        loss = loss.detach().float()
        if self.world > 1:
            dist.all_reduce(loss)
            loss = loss / self.world
        return loss.item()

    def train(self, stop_flag: dict, on_step=None) -> None:
        tc, a = self.tc, self.args
        self.model.train()
        bar = tqdm(total=tc.steps, initial=self.step, desc="train",
                   disable=a.quiet or self.rank != 0, dynamic_ncols=True)
        self.postfix: dict = {}
        try:
            if self.val_pending:  # interrupted during its validation: finish that step
                self._end_of_step(stop_flag, bar, on_step)
            while self.step < tc.steps:
                self._stop_if(bool(stop_flag.get("signal")), stop_flag)
                self._one_step(bar)
                self._end_of_step(stop_flag, bar, on_step)
        finally:
            bar.close()

    def _one_step(self, bar) -> None:
        tc = self.tc
        t0 = time.perf_counter()
        x, y = self.segment()
        try:
            out = train_step(
                self.ddp, self.opt, x, y, self.mems, lr_at(self.step, tc), tc.clip,
                self.autocast,
                check_finite=lambda t: not any_rank(not torch.isfinite(t), self.device))
        except NonFiniteLoss as e:
            # an error: train prints it, as every error, after its prefix (a Stop: none)
            raise RunError(f"{e} at step {self.step + 1}; stopped, "
                           f"{after_nan(self.dir)}") from None
        self.mems = out.mems or None
        self.pos += x.shape[1]
        self.step += 1
        loss = self._mean_loss(out.loss)
        self.train_seconds += time.perf_counter() - t0  # validation not included
        self.tokens_seen += x.numel() * self.world
        rate = self.tokens_seen / max(self.train_seconds, 1e-9)
        if self.step % self.args.log_every == 0 or self.step == tc.steps:
            self.log({"step": self.step, "loss": loss, "bpc": bits_per_char(loss),
                      "lr": lr_at(self.step - 1, tc), "tokens_per_s": round(rate, 1)})
        bar.update(1)
        self.postfix.update(loss=f"{loss:.3f}", bpc=f"{bits_per_char(loss):.3f}",
                            tok_s=f"{rate:,.0f}")
        bar.set_postfix(self.postfix, refresh=False)

    def _end_of_step(self, stop_flag: dict, bar, on_step) -> None:
        """Validation, best.pt, last.pt, curves and --pause-at after step self.step."""
        a = self.args
        final = self.step == self.tc.steps
        if (a.eval_every and self.step % a.eval_every == 0) or final:
            bpc = self.validate(stop_flag, bar)
            self.postfix["val_bpc"] = f"{bpc:.3f}"
            bar.set_postfix(self.postfix)
            if any_rank(bpc < self.best, self.device):
                self.best = bpc
                self.save("best.pt", with_state=False)
        if self.step % a.save_every == 0 or final:
            self.save(out=final)
        if final and self.rank == 0:
            plot_curves(self.dir, self.history)
        if on_step is not None and on_step(self.step):  # tests: simulated interrupt
            stop_flag["signal"] = "SIGINT"
        if a.pause_at and self.step == a.pause_at and not final:
            self.save()
            raise Stop(f"paused at step {self.step}: saved {self.dir}/last.pt; "
                       f"{go_on(self.dir)}", 0)


def _finite_or_none(x: float):
    return x if x != float("inf") else None
