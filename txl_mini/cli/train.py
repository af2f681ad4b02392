"""`python -m txl_mini train`: long training runs with a run directory.

Options are parsed and every value checked before any corpus is built; the run itself
(checkpoints, exact resume, Ctrl-C, several processes) is cli/run.py."""

from __future__ import annotations

import argparse
import errno
import math
import os
import sys

import torch
import torch.distributed as dist

from ..config import PRESETS
from ..data import CORPORA, MAX_OFFLINE_CHARS, OFFLINE_CHARS
from ..text8 import DataError
from ..train import TrainConfig
from . import errors, leftover, rundir, stop
from .compile_cache import check_compile_cache
from .corpus import check_corpus_options, load_corpus
from .ddp import any_rank, init_group, local_rank, rank_world, use_gpu, world_size
from .errors import MODEL_SIZE, TRAIN_RUN_SIZE, drop_compile_times, oom_words, starved
from .memory import check_memory
from .options import (
    Parser,
    UsageError,
    add_common,
    add_model_options,
    check_counts,
    check_seed,
    fail,
    flag,
    given,
    model_config,
    pick_device,
    preset_help,
    set_threads,
)
from .paths import choose_run_dir, expand, refuse_empty, refuse_stdin
from .resume import Finished, read_last, restore_options
from .run import Run, RunError
from .settings import check_distances, check_lr, check_model_options, check_vocab
from .stdout import StdoutFailed

PROG = "python -m txl_mini train"
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="Train a char-level Transformer-XL (or the "
               "vanilla baseline) with checkpoints, exact resume and clean Ctrl-C. "
               "Several GPUs: torchrun --nproc_per_node N -m txl_mini train ...")
    add = p.add_argument
    add("--preset", default="book", choices=sorted(PRESETS), help=preset_help())
    add("--vanilla", action="store_true", help="train the vanilla baseline instead")
    add("--corpus", default="offline", choices=CORPORA,
        help="offline: generated here, no download; text8: downloaded and verified; "
        "cue, names: the chapters' generated corpora (txl_mini.corpus.BOOK_CORPORA)")
    add("--path", help="local text8(.zip) for --corpus text8; any text file for "
        "--corpus offline (normalized to a-z and space, split 90/5/5; stored as an "
        "absolute path)")
    add("--offline-chars", type=int, default=OFFLINE_CHARS, help="size of the "
        f"generated corpus, --corpus offline without --path (at most "
        f"{MAX_OFFLINE_CHARS:,})")
    add("--steps", type=int, default=500, help="optimizer updates (one segment each)")
    add("--batch-size", type=int, default=16,
        help="B parallel streams (all processes together)")
    add("--lr", type=float, default=1e-3, help="peak learning rate of Adam")
    add("--warmup", type=int, default=50,
        help="linear warm-up steps, then cosine decay to 0")
    add("--clip", type=float, default=0.25, help="gradient-norm clipping")
    add("--seed", type=int, default=0, help="initial weights, dropout")
    add("--precision", default="bf16", choices=["bf16", "fp32"],
        help="bf16 autocast on CUDA (CPU and MPS always run fp32)")
    add("--eval-every", type=int, default=0,
        help="validation bpc every N steps (0: at the end)")
    add("--eval-chars", type=int, default=100_000,
        help="validation characters per evaluation")
    add("--save-every", type=int, default=500,
        help="write last.pt every N steps (and at the end)")
    add("--log-every", type=int, default=10, help="a metrics.jsonl line every N steps")
    add("--run-dir", help="directory for config, metrics, curves and checkpoints "
        "(default: --out without .pt)").unless = ("--out", "--resume")  # separator
    add("--out", help="also write the final model to this .pt file")
    add("--resume", metavar="DIR", help="continue the run in DIR exactly (same "
        "machine, device and --threads)")
    add("--overwrite", action="store_true",
        help="start over in an existing run directory")
    add("--pause-at", type=int, metavar="STEP", help="save and stop at this step "
        "(< --steps), to --resume later (e.g. time-limited jobs)")
    add_common(p, threads=", recorded for --resume")
    add_model_options(p)
    return p


def check_values(args) -> None:
    """Sizes and values, each against its own rule, before anything is built."""
    check_counts(args, {"steps": 1, "batch_size": 1, "warmup": 0, "eval_every": 0,
        "eval_chars": 2, "save_every": 1, "log_every": 1, "offline_chars": 1000,
        "pause_at": 1})
    for name, v in (("lr", args.lr), ("clip", args.clip)):
        if not (math.isfinite(v) and v > 0):
            raise UsageError(f"--{name} must be a finite number > 0, got {v}")
    check_lr(args.lr)
    check_seed(args.seed)
    check_distances(args.clamp_len, args.shaw_clip)
    refuse_empty(*((flag(n), getattr(args, n)) for n in ("run_dir", "out", "path")))
    refuse_stdin(args.path, "text")  # before it is made absolute (/here/-)
    if args.offline_chars > MAX_OFFLINE_CHARS:
        raise UsageError(f"--offline-chars must be <= {MAX_OFFLINE_CHARS:,} (text8's "
                         f"size), got {args.offline_chars:,}")
    check_vocab(args.vocab_size)
    if args.pause_at is not None and args.pause_at >= args.steps:
        raise UsageError(f"--pause-at {args.pause_at} must be below --steps "
                         f"{args.steps} (the run ends there anyway)")


def main(argv=None, on_step=None) -> int:
    """`python -m txl_mini train ...`; returns the exit status. `on_step(step) -> True`
    requests a stop like Ctrl-C does (tests interrupt at an exact step with it)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    created, locks = [], []  # the run's new folders, its lock (rundir.prepare_run_dir)
    trained = distributed = False
    try:
        distributed = world_size() > 1
        refuse_empty(("--resume", args.resume))
        for name in ("run_dir", "out", "resume"):  # --path too, once restored
            setattr(args, name, expand(getattr(args, name), flag(name), name != "out"))
        saved = (restore_options(args, argv, build_parser(), check_values)
                 if args.resume else None)
        check_values(args)
        check_corpus_options(args, "offline_chars" in given(build_parser(), argv))
        check_compile_cache()  # torch makes it as run.py builds Adam
        if args.path is not None:  # a resume or evaluate from elsewhere finds it
            args.path = os.path.abspath(expand(args.path, "--path"))
        set_threads(args.threads)
        args.threads = torch.get_num_threads()  # recorded: resume uses the same
        cfg = model_config(args.preset, args)
        if not args.resume:  # a run begun before a pair was refused still resumes
            check_model_options(args, cfg)
        device = pick_device(args.device, local_rank())
        if device.type == "cuda":
            use_gpu(device)  # NCCL collectives use the current device
        if distributed and not dist.is_initialized():
            init_group("nccl" if device.type == "cuda" else "gloo", PROG)
        rank, world = rank_world()
        if args.batch_size % world:
            raise UsageError(f"--batch-size {args.batch_size} must be divisible by "
                             f"the {world} processes")
        M = 0 if args.vanilla else cfg.mem_len
        check_memory(cfg, args.batch_size // world, M, True, device,
                     run_size=TRAIN_RUN_SIZE, model_size=MODEL_SIZE)
        named = choose_run_dir(args)  # "--run-dir", or what stands for it
        refused = out_was = None  # what --out held: rank 0's, which writes it
        if rank == 0:
            try:
                out_was = rundir.prepare_run_dir(args, created, locks, named)
            except UsageError as e:
                refused = e
        if any_rank(refused is not None, device):  # all ranks stop together
            raise refused or RunError("rank 0 refused the run directory")
        # last.pt read under the lock: a finished run's --out is written here, and
        # another process may be writing last.pt
        last = saved and read_last(args.resume, saved, args.steps, device, rank == 0)
        at = last["extra"]["step"] if last else 0
        if args.pause_at is not None and args.pause_at <= at:
            raise UsageError(f"--pause-at {args.pause_at}: the run is already at "
                             f"step {at}")
        tokens, valid, corpus = load_corpus(args, cfg, PROG, saved and saved["corpus"])
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         warmup=args.warmup, clip=args.clip, seed=args.seed)
        if args.overwrite and not args.resume and rank == 0:
            rundir.clear_run_dir(args.run_dir)
        run = Run(args, cfg, tc, tokens, valid, corpus, device, last, out_was=out_was)
        if rank == 0:
            rundir.announce(args, run, corpus, tokens, device, world, saved)
        stop_flag: dict = {}
        try:
            with stop.signals_caught(stop_flag):
                run.train(stop_flag, on_step)
                stop.after_loop(stop_flag, run)  # a signal in the last saves or plot
        except Exception as e:  # e.g. torch.save's "unexpected pos" after an Abort
            if stop_flag.get("abort"):
                raise stop.Abort(*stop_flag["abort"]) from None
            if starved(e):  # last.pt is as its last save left it (atomic)
                drop_compile_times()
                raise RunError(oom_words("train", f" after step {run.step}") + "; "
                               + leftover.kept(args.run_dir)) from None
            raise
        trained = True
        if rank == 0:
            rundir.summary(args, run, valid)
        return 0
    except Finished as e:  # 2: --out not written (its folder is gone)
        return fail(PROG, str(e), e.code)
    except stop.Stop as e:
        if rank_world()[0] == 0:  # a signal, an error: news for a terminal, not a pipe
            out = sys.stdout if e.code == 0 else sys.stderr  # its newline escaped too
            print(errors.printable(str(e), out), file=out, flush=True)
        return e.code
    except stop.Abort as e:
        return fail(PROG, f"{e.again}: stopped at once without saving; "
                    f"{leftover.kept(args.run_dir)}", stop.exit_code(e.name))
    except BrokenPipeError:  # `train ... | head -1`: cli/__init__.py says nothing;
        _tidy(locks, created)  # at the first line, the run's folders are still empty
        raise
    except (KeyboardInterrupt, UsageError, RunError, DataError, OSError, ValueError,
            StdoutFailed) as e:  # before or outside the loop: unlock, tidy up
        _tidy(locks, created)
        return fail(PROG, *_one_line(e, args.run_dir or args.resume, trained))
    finally:  # a stop or a crash too: the run's new folders, still empty, go
        _tidy(locks, created)
        if distributed and dist.is_initialized():
            dist.destroy_process_group()


def _tidy(locks: list, created: list = ()) -> None:
    """Unlock; the run's new folders go while empty (--out's stay: leftover.KEPT)."""
    for lock in locks:
        lock.release()
    rundir.remove_created(list(created), leftover.KEPT)


def _one_line(e: BaseException, run_dir, trained: bool) -> tuple[str, int]:
    """The line and exit status for a run that failed before or outside its loop."""
    if isinstance(e, KeyboardInterrupt):  # Ctrl-C, or SIGTERM (stop.Terminated)
        words, code, _ = stop.stopped(e)
        when = "after its last step" if trained else "before training started"
        return f"{words} {when}; {leftover.kept(run_dir)}", code
    if isinstance(e, UsageError):
        return f"error: {e}", e.code
    if not isinstance(e, OSError):
        return f"error: {e}", 1
    what = (f"{e.filename}: {e.strerror}" if e.filename and e.errno != errno.EMFILE
            else errors.why(e))  # EMFILE: the process' limit (its file: torch's own)
    if e.errno in WRITE_ERRORS:  # a full disk, a directory that went away
        what = "cannot write " + what
    if e.errno == errno.EEXIST:  # --out appeared (files.atomic_path); no --resume:
        return f"error: {what}; {leftover.appeared(run_dir)}", 1  # it rewrites --out
    return f"error: {what}; {leftover.kept(run_dir)}", leftover.status(e)


if __name__ == "__main__":  # python -m txl_mini.cli.train: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("train")
