"""Files of a run directory that are not checkpoints: metrics.jsonl, curves.png, config.json
(chapter 6; txl_mini.runner writes them)."""

from __future__ import annotations

import json
import os


def read_metrics(run_dir: str) -> list[dict]:
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


def write_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def remove_created(created: list) -> None:
    """A run that fails before training leaves no empty directory behind."""
    for d in reversed(created):
        try:
            os.rmdir(d)  # only if still empty
        except OSError:
            pass
