"""Several processes (torchrun): who am I, do all ranks agree, each rank's RNG state."""

from __future__ import annotations

import os
import re
import socket
import sys
import threading

import torch
import torch.distributed as dist

from .errors import UsageError

SAY_AFTER = 10  # seconds of waiting for the other processes before saying so
JOINED: list = []  # True once this process joined a group: it ends by leave()


def init_group(backend: str, prog: str) -> None:
    """dist.init_process_group, waiting for the other ranks where Ctrl-C, SIGTERM and
    SIGHUP still stop it. Waited for in the main thread, the wait is torch's, in C++:
    no Python signal handler ran there, and a launch whose other process never came
    up could only be killed (-9). In a thread, the main thread waits in Python."""
    done, failed = threading.Event(), []

    def join():
        try:
            dist.init_process_group(backend)
        except BaseException as e:  # raised in the main thread below
            failed.append(e)
        finally:
            done.set()

    threading.Thread(target=join, name="rendezvous", daemon=True).start()
    if not done.wait(SAY_AFTER):  # the handlers run during the wait
        print(f"{prog}: waiting for all {os.environ['WORLD_SIZE']} processes at "
              f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} (WORLD_SIZE); "
              "Ctrl-C stops", file=sys.stderr, flush=True)
        done.wait()
    if failed:
        raise failed[0]
    JOINED.append(True)


def leave(code) -> None:
    """End a process that joined a group without Python's teardown. torch keeps
    gloo's worker threads to the end, past destroy_process_group, and one may still
    be dropping a finished collective's tensors, which takes the interpreter: in its
    teardown that was `terminate called without an active exception`, SIGABRT, and
    torchrun reported the run failed (4 of ~125 paused runs; rank 1, whose last
    all_gather_object comes just before it exits). The command's files are closed
    and its line printed by now: only the standard streams still need a flush."""
    if not JOINED or not isinstance(code, int):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: its line could not go anyway
            pass
    os._exit(code)


def check_world(run_dir: str, trained: int) -> None:
    """A resumed run has as many processes as `trained` it: bad input otherwise (it
    was a RunError, exit 1, where the run restored each process' streams)."""
    world = rank_world()[1]
    if trained != world:
        were = "process" if trained == 1 else "processes"
        raise UsageError(f"{run_dir} was trained with {trained} {were}; resume it "
                         f"with the same number (now {world})")


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
    # .cpu(): last.pt is loaded onto the run's device, and both setters take a CPU
    # ByteTensor (a CUDA one raised TypeError, so no resume on a GPU worked)
    torch.set_rng_state(state["torch"].cpu())
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"].cpu(), device)


# what torch's env:// rendezvous reads beside WORLD_SIZE > 1 (torchrun sets them all)
RENDEZVOUS = ("RANK", "MASTER_ADDR", "MASTER_PORT")


def world_size() -> int:
    """torchrun's WORLD_SIZE, 1 without it, checked with the variables torch reads
    beside it: one line naming the one that is wrong or missing, not torch's error
    (exit 1) or a run of 0 processes taken as one."""
    world = _whole("WORLD_SIZE", "a number of processes", "unset it")
    if world == 0:
        raise UsageError("WORLD_SIZE='0' in the environment: no process would run "
                         "(torchrun sets it to 1 or more; unset it for one process)")
    if world > 1:
        for name in RENDEZVOUS:
            if not os.environ.get(name):
                raise UsageError(f"WORLD_SIZE={world} in the environment, but {name} "
                                 "is not set (torchrun sets both; unset WORLD_SIZE "
                                 "for one process)")
        port = os.environ["MASTER_PORT"]
        if not (re.fullmatch(r"[0-9]+", port) and 1 <= int(port) <= 65535):
            raise UsageError(f"MASTER_PORT={port!r} in the environment is not a port "
                             "number, 1 to 65535 (torchrun sets it; unset WORLD_SIZE "
                             "for one process)")
        addr = os.environ["MASTER_ADDR"]
        try:  # else torch retries for 30 minutes, a warning a second, then a C++ dump
            socket.getaddrinfo(addr, int(port))
        except (OSError, UnicodeError) as e:
            raise UsageError(f"MASTER_ADDR={addr!r} in the environment: no such host "
                             f"({getattr(e, 'strerror', None) or e}; torchrun sets "
                             "it; unset WORLD_SIZE for one process)") from None
    if "WORLD_SIZE" not in os.environ:  # RANK=1 alone ran silently as rank 0
        for name in ("RANK", "LOCAL_RANK"):
            if _whole(name, "a rank", "unset it") > 0:
                raise UsageError(f"{name}={os.environ[name]!r} in the environment, "
                                 "but WORLD_SIZE is not set (torchrun sets both; "
                                 f"unset {name} for one process)")
    if world > 1 or "WORLD_SIZE" in os.environ and "RANK" in os.environ:
        rank = _whole("RANK", "a rank", "unset it and WORLD_SIZE")
        if rank >= world:  # else it waits for ranks that never come (WORLD_SIZE=1:
            # it ran as rank 0, though told it was another)
            raise UsageError(f"RANK='{rank}' in the environment is not a rank below "
                             f"WORLD_SIZE={world} (torchrun sets both; unset them "
                             "for one process)")
    if (local := local_rank()) >= world:  # a machine's ranks are some of the world's
        raise UsageError(f"LOCAL_RANK='{local}' in the environment is not a rank "
                         f"below WORLD_SIZE={world} (torchrun sets both; unset them "
                         "for one process)")
    return world


def use_gpu(device: torch.device) -> None:
    """torch.cuda.set_device (NCCL collectives use the current device), once
    LOCAL_RANK names one of this machine's GPUs: pick_device takes it modulo their
    count, and LOCAL_RANK=5 of two GPUs would share one with another rank. One
    visible GPU is the exception: launchers that give each process its own
    (CUDA_VISIBLE_DEVICES per rank) keep their LOCAL_RANK, and it is GPU 0."""
    local, gpus = local_rank(), torch.cuda.device_count()
    if local >= gpus > 1:
        raise UsageError(f"LOCAL_RANK='{local}' in the environment is not one of "
                         f"this machine's {gpus} GPUs (torchrun sets it below "
                         "--nproc-per-node; unset it for one process)")
    torch.cuda.set_device(device)


def launched_rank() -> int:
    """RANK of one of several processes that torchrun started, its variables all
    valid; else 0. A rank > 0 leaves the run's errors to rank 0, but where the
    variables themselves are refused, no run began: every process says so."""
    try:
        several = world_size() > 1 and local_rank() >= 0
    except UsageError:
        return 0
    return int(os.environ["RANK"]) if several else 0


def local_rank() -> int:
    """torchrun's LOCAL_RANK (0 without it): which of this machine's GPUs to use."""
    return _whole("LOCAL_RANK", "a rank", "unset it")


def _whole(name: str, what: str, unset: str) -> int:
    v = os.environ.get(name, "1" if name == "WORLD_SIZE" else "0")
    if not re.fullmatch(r"[0-9]+", v):
        raise UsageError(f"{name}={v!r} in the environment is not {what} (torchrun "
                         f"sets it; {unset} for one process)")
    return int(v)
