"""Several processes (torchrun): who am I, do all ranks agree, each rank's RNG state."""

from __future__ import annotations

import os
import re

import torch
import torch.distributed as dist

from .options import UsageError


def rank_world() -> tuple[int, int]:
    return (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)


def any_rank(flag, device=None) -> bool:
    """True if `flag` holds on any rank, so that every rank takes the same branch."""
    if not dist.is_initialized():
        return bool(flag)
    t = torch.tensor([float(bool(flag))], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def rng_state(device: torch.device) -> dict:
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device: torch.device) -> None:
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def env_count(name: str, default: int) -> int:
    """torchrun's WORLD_SIZE or LOCAL_RANK: a whole number, or one line."""
    v = os.environ.get(name, str(default))
    if not re.fullmatch(r"[0-9]+", v):
        raise UsageError(f"{name}={v!r} in the environment is not a number of "
                         "processes (torchrun sets it; unset it for one process)")
    return int(v)
