"""Train the two small models whose checkpoints chapters 2 and 4 load
(issue 8's cue result).

The committed checkpoints came from (each file records its own command, seed and
commit):

    python scripts/train_cue_models.py --kind xl --steps 2000 --save-every 250
    python scripts/train_cue_models.py --kind vanilla --steps 10000 --save-every 1000

Both read the offline corpus with random-letter names repeated exactly DISTANCE
characters later (txl_mini.corpus, names="letters"), with one torch thread and a fixed
seed. Every --save-every steps the current weights go to OUT/cue_<kind>.pt
(txl_mini.checkpoint, atomic), with the command, seed, step and git commit in its meta,
so an interrupted run still leaves a usable model. Load one with
`txl_mini.checkpoint.load_checkpoint`.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import asdict

import torch

from txl_mini.checkpoint import save_checkpoint
from txl_mini.config import ModelConfig, preset
from txl_mini.corpus import BOOK_CORPORA, make_offline_corpus
from txl_mini.data import CharVocab, batchify, segment_at
from txl_mini.model import TransformerXL, VanillaTransformer
from txl_mini.train import TrainConfig, train_steps

# The cue sits exactly this many characters before each dependent character.
CORPUS = BOOK_CORPORA["cue"]  # the settings live in txl_mini.corpus (`--corpus cue`)
DISTANCE = CORPUS["distances"]  # 24


def model_config(kind: str) -> ModelConfig:
    mem = 32 if kind == "xl" else 0  # "rel0": relative positions, no memory
    return preset("book", n_layer=2, d_model=64, d_head=16, d_inner=256, dropout=0.0,
                  seg_len=32, mem_len=mem)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    # The docstring's summary (its first paragraph, wrapped) on one line.
    summary = " ".join(__doc__.split("\n\n")[0].split())
    p = argparse.ArgumentParser(description=summary,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--kind", choices=["vanilla", "xl", "rel0"], required=True,
                   help="vanilla: absolute, no memory; xl: relative, memory 32; "
                        "rel0: relative, no memory")
    p.add_argument("--steps", type=int, default=5000, help="optimizer steps")
    p.add_argument("--lr", type=float, default=5e-3, help="peak learning rate")
    p.add_argument("--seed", type=int, default=0, help="torch seed")
    p.add_argument("--save-every", type=int, default=500,
                   help="steps between checkpoints")
    p.add_argument("--out", default="book/checkpoints", help="folder for cue_<kind>.pt")
    a = p.parse_args(argv)
    if not os.path.isdir(a.out):
        print(f"error: output folder {a.out} does not exist", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    corpus = make_offline_corpus(**CORPUS)
    train_c = corpus.split()[0]
    tokens = CharVocab().encode(train_c.text)
    dep = train_c.dependent_mask()
    cfg = model_config(a.kind)
    tc = TrainConfig(steps=a.steps, batch_size=16, lr=a.lr, warmup=50, seed=a.seed)
    torch.manual_seed(a.seed)
    model = (VanillaTransformer if a.kind == "vanilla" else TransformerXL)(cfg)
    streams = batchify(tokens, tc.batch_size)  # (B, T), as train_steps cuts them
    dep_streams = batchify(dep, tc.batch_size)  # (B, T), aligned with the tokens
    path = os.path.join(a.out, f"cue_{a.kind}.pt")
    dep_sum = dep_n = 0.0
    t0 = time.process_time()
    # the library's loop (txl_mini.train.train_steps): segments, memory, schedule
    for step, pos, out in train_steps(model, tokens, tc):
        _, y = segment_at(streams, pos, cfg.seg_len)
        _, dy = segment_at(dep_streams, pos, cfg.seg_len)  # dependent targets
        with torch.no_grad():
            nll = torch.nn.functional.cross_entropy(
                out.logits.reshape(-1, cfg.vocab_size), y.reshape(-1), reduction="none")
            dep_sum += nll[dy.reshape(-1)].sum().item()
            dep_n += int(dy.sum())
        if (step + 1) % a.save_every == 0 or step + 1 == a.steps:
            print(f"step {step + 1}: loss {out.loss.item():.3f} nats, dependent "
                  f"{dep_sum / max(dep_n, 1):.3f} nats, "
                  f"{time.process_time() - t0:.0f} s CPU", flush=True)
            dep_sum = dep_n = 0.0
            # BOOK_CORPORA holds plain types only (lists, not tuples), so that
            # torch.load(..., weights_only=True) reads the record back.
            meta = dict(kind=a.kind, train=asdict(tc), corpus=dict(CORPUS),
                        step=step + 1,
                        command=" ".join(["python"] + sys.argv), commit=git_commit(),
                        torch=str(torch.__version__))
            save_checkpoint(path, model, meta)  # atomic; load with load_checkpoint
    return 0


if __name__ == "__main__":
    sys.exit(main())
