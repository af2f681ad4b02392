"""A training run's directory: what is in it, and every file in it but checkpoints.

    config.json    the options, the model config and the corpus (name, size, sha1)
    metrics.jsonl  one JSON object per logged step / validation (cli/metrics.py)
    curves.png     training and validation bpc (if matplotlib is installed)
    last.pt        the latest checkpoint: model, optimizer, RNG, data position, memory
    best.pt        the weights with the lowest validation bpc so far
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import asdict

from ..files import ANY, TEMP_SUFFIX, name_too_long, remove_stale_temps, snapshot
from . import plural
from .errors import printable, typed
from .folders import PROBE, check_writable
from .leftover import CLEARING, FILES, KEPT, LOCKED, OUT_MADE, UNCLEARED, identity
from .lock import LOCK_NAME, RunLock
from .metrics import trim_metrics
from .options import UsageError
from .outputs import is_run_dir, refuse_in_run, write_text
from .paths import (
    check_out,
    refuse_special,
    refuse_text_as_out,
    same_file,
    writable_folder,
)
from .stop import held

OWN = FILES + (LOCK_NAME,)  # every name a run's folder holds


def _foreign(d: str, out: str | None) -> list[str]:
    """What in `d` is neither a run's file, nor --out (now or as config.json records
    it: the run wrote it there, as a regular file: a folder or a FIFO of that name is
    someone else's, which --overwrite removed), nor our temporaries or the lock."""
    ours = set(OWN) | {n for o in (out, _out_of(d)) if (n := _in(d, o))
                       and os.path.isfile(os.path.join(d, n))}
    return sorted(n for n in os.listdir(d) if n not in ours and not (
        n.startswith(".") and n.endswith(TEMP_SUFFIX)) and not n.startswith(PROBE))


def _in(d: str, out: str | None) -> str | None:
    """The name of the file `out` if it is in the folder `d`, else None."""
    if out and os.path.realpath(os.path.dirname(out)) == os.path.realpath(d):
        return os.path.basename(out)
    return None


def _out_of(d: str) -> str | None:
    """The --out `d`'s config.json records, if any (a name: in `d`)."""
    try:
        with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
            out = json.load(f)["args"]["out"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return os.path.join(d, out) if isinstance(out, str) else None


def recorded_out(args) -> str | None:
    """--out as config.json records it: in the run directory, by its name there
    (absolute, a moved or copied run wrote it into the old folder, and --overwrite
    took it for someone's file), else absolute. Old absolute records read as ever."""
    return _in(args.run_dir, args.out) or args.out


def refuse_folder_out(out: str, d: str) -> None:
    """The --out config.json records, a folder now: one line, not the advice for a
    --out the user gave ('give a file name like OUT/model.pt')."""
    if os.path.isdir(out) and not same_file(out, d):  # d itself: check_out says so
        raise UsageError(f"{out}, the --out {os.path.join(d, 'config.json')} "
                         f"records, is a directory now; move it away, and --resume "
                         f"{d} writes the model there")


def refuse_long(d: str, named: str, own: tuple) -> None:
    """A run directory whose path leaves no room for its files' names (`own`; under
    PATH_MAX itself, DIR/metrics.jsonl's temporary is over), or with a folder's name
    too long (makedirs' 'File name too long'): refused before any work, as --out is
    (config.json failed once the corpus was built, exit 1)."""
    longest = max(own, key=len)  # with the temporaries' TEMP_EXTRA
    why = name_too_long(os.path.join(d, longest)) or ""
    who = f"{named} {d}" if named.startswith("--") else f"{d}, {named},"
    if why.startswith("a folder"):
        raise UsageError(f"{who.rstrip(',')}: {why}; give a shorter one")
    if why:
        raise UsageError(f"{who} leaves no room for the files a run writes in it "
                         f"({longest}: {why}); give a shorter path")


def prepare_run_dir(args, created: list, locks: list, named: str = "--run-dir"):
    """Validate (and create) the run directory and --out before any training; lock it.

    Directories made here are appended to `created`, and the lock to `locks`, so that
    a run failing before it trains can remove them again (`remove_created`, release).
    Temporary files left by a killed run (kill -9 during a checkpoint write) are
    removed once the lock is held. `named`: how to name the run directory
    (paths.choose_run_dir). Returns what --out held when checked (files.snapshot;
    ANY without --out): the run's end replaces only that (Run.save).
    """
    d = args.run_dir
    refuse_long(d, named, OWN)
    refuse_special(d, OWN)  # before anything opens one
    out = check_out(args.out, d, OWN) if args.out else None
    out_was = snapshot(out) if out else ANY  # returned: a module's dict outlived runs
    refuse_text_as_out(args.out, args.path)
    OUT_MADE.clear()  # one run a process, as LOCKED
    KEPT.clear()
    UNCLEARED.clear()
    if not args.resume:  # a resumed DIR is checked by the resume options
        _check_new(args, d, created, named)
    if args.resume and not writable(d):  # read-only (a copy on a CD): nobody can
        return out_was  # write there, nor lock it; resume.read_last says finished
    # (its --out written only if missing), else refuses it (every rank alike):
    # input, not a failed run
    if out:  # a resumed run's too: its config.json may name a place gone since
        had = len(created)
        writable_folder(os.path.dirname(out), "--out", created)
        OUT_MADE[:] = created[had:]  # a finished run's: gone, not made (resume_out)
    with held():  # a signal waits until the lock is in `locks`, where tidying looks
        locks.append(RunLock(d))
    LOCKED.clear()  # one run a process; tests call main() again in theirs
    LOCKED[os.path.abspath(d)] = identity(d)
    for name in FILES:  # what atomic writes killed mid-way left here
        remove_stale_temps(os.path.join(d, name))
    if out:  # --out's too: a killed write's, which nothing else removes
        remove_stale_temps(out)
    return out_was


def writable(d: str) -> bool:
    """A file can be written into the folder `d` (folders.check_writable)."""
    try:
        check_writable(d, "--resume")
    except UsageError:
        return False
    return True


def _check_new(args, d: str, created: list, named: str) -> None:
    """A new run: DIR empty, ours to --overwrite, or made here; --out a new file."""
    who = f"--run-dir {d}" if named == "--run-dir" else f"{d}, {named},"
    if os.path.exists(d) and not os.path.isdir(d):
        raise UsageError(f"{who} is a file, not a directory")
    if os.path.isdir(d) and os.listdir(d):
        foreign = _foreign(d, args.out)
        if not is_run_dir(d):  # a run writes config.json before any other file:
            # without it, a last.pt or metrics.jsonl there is someone else's
            foreign = foreign or sorted(set(os.listdir(d)) & set(FILES))
        if foreign:
            what = ", ".join(foreign[:3])
            raise UsageError(f"{who} is not a run directory of python -m txl_mini "
                             f"train (it holds {what}); give a new or empty directory"
                             + ("" if named == "--run-dir" else " with --run-dir DIR"))
        if not args.overwrite and set(os.listdir(d)) & set(FILES):
            raise UsageError(f"run directory {d} already exists; pass --resume "
                             f"{typed(d)} to continue it or --overwrite to start "
                             "over")
        if set(os.listdir(d)) & set(FILES):  # a stop before the clear: untouched
            UNCLEARED.add(d)
    if args.out and os.path.exists(args.out) and not args.overwrite:
        raise UsageError(f"--out {args.out} already exists; pass --overwrite to "
                         "replace it")
    # a run inside another made that one 'not a run directory' for its --overwrite
    refuse_in_run(d, named, (), kind="folder")
    writable_folder(d, named, created)


def clear_run_dir(d: str) -> None:
    """--overwrite: remove the old run's files (only ours), once every check passed;
    its --out too if it wrote that into `d` (config.json records it): kept, and
    recorded by no config.json since, it made `d` 'not a run directory (it holds
    final.pt)' for the --overwrite after. Removed first: config.json names it, and
    config.json last, so a clear cut short (Ctrl-C) is still a run that --overwrite
    takes; a stop in it says so (leftover.kept), not 'last.pt is kept'."""
    old = _in(d, _out_of(d))
    UNCLEARED.discard(d)
    CLEARING.add(d)  # until the new run's config.json (announce)
    for f in ((old,) if old else ()) + FILES[1:] + FILES[:1]:  # config.json last
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))


def remove_created(created: list, keep: list = ()) -> None:
    """A run that fails before training leaves no empty directory behind; `keep`:
    --out's, once the run trained all its steps (KEPT): its --resume writes there."""
    for d in reversed([d for d in created if d not in keep]):
        try:
            os.rmdir(d)  # only if still empty
            LOCKED.pop(os.path.abspath(d), None)  # gone, but not 'went away'
        except OSError:
            pass


def summary(args, run, valid) -> None:
    last = run.history[-1].get("val_bpc", 0)
    print(printable(f"trained {plural(run.tc.steps, 'step')}; validation {last:.3f} "
                    f"bpc on {len(valid):,} {args.corpus} chars (best {run.best:.3f}); "
                    f"wrote {run.dir}/last.pt and best.pt"
                    + (f" and {args.out}" if args.out else ""), sys.stdout))
    if importlib.util.find_spec("matplotlib") is None:  # not a plot that failed
        print("note: matplotlib is not installed, so no curves.png was drawn")


def announce(args, run, corpus, tokens, device, world, saved=None) -> None:
    """One line (first: a stdout that fails leaves nothing written), config.json (a
    new run; a resumed one's, `saved`, with the new path of a text given a --path)
    and the trimmed metrics (a resumed one), a note if warm-up outlasts it."""
    where = f" ({args.path})" if args.path else ""
    again = f"; resuming at step {run.step}" if args.resume else ""
    print(printable(
        f"corpus: {args.corpus}{where}, {len(tokens):,} training chars; device: "
        f"{device} x {world} process{'es' if world > 1 else ''}"
        + (f", {plural(args.threads, 'thread')}" if device.type == "cpu" else "") +
        f"; {type(run.model).__name__} with {run.model.num_params():,} parameters; "
        f"run dir: {run.dir}{again}", sys.stdout), flush=True)
    if args.resume:  # drop lines logged after last.pt (a crash leaves some)
        trim_metrics(run.dir, run.history)
    if args.resume and args.path != saved["args"].get("path"):  # the text moved:
        moved = {**saved, "args": {**saved["args"], "path": args.path},  # later
                 "corpus": {**saved["corpus"], "path": args.path}}  # resumes read it
        write_text(os.path.join(run.dir, "config.json"), json.dumps(moved, indent=1))
    elif not args.resume:
        write_text(os.path.join(run.dir, "config.json"), json.dumps({
            "args": {**vars(args), "out": recorded_out(args)}, "model":
            asdict(run.model.cfg), "model_class": type(run.model).__name__,
            "corpus": corpus, "world_size": world}, indent=1))
        CLEARING.clear()  # a new run there now
    if args.warmup >= args.steps and not args.resume:
        print(f"python -m txl_mini train: note: --warmup {args.warmup} >= --steps "
              f"{args.steps}: the learning rate never reaches --lr {args.lr}",
              file=sys.stderr)
