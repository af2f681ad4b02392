"""What a run that stopped abnormally leaves, and how to go on: its last.pt kept,
none written yet, a file of the run that is no file, or its folder gone.

LOCKED is the run folder this process locked (rundir.prepare_run_dir records it): a
folder moved or removed while we ran (`mv run run2`) is told from one with no
checkpoint yet, and is not made again by the next checkpoint (in_run_dir).
"""

from __future__ import annotations

import errno
import importlib.util
import os

from .errors import typed
from .kinds import not_regular
from .outputs import is_run_dir

# the files a run writes in its folder (rundir's, which imports this module); those
# but last.pt are OTHERS, which --resume refuses where one is no file
FILES = ("config.json", "metrics.jsonl", "curves.png", "last.pt", "best.pt")
OTHERS = tuple(name for name in FILES if name != "last.pt")


CLEARING: set = set()  # the run folder whose old files --overwrite began removing
UNCLEARED: set = set()  # one whose old run --overwrite is to remove, not begun yet
# the levels of --out's folder prepare_run_dir made (outermost first): gone before
OUT_MADE: list = []
# those kept once the run trained all its steps (run.py, as it writes --out): a
# full disk or a double Ctrl-C there, and the --resume it names writes --out there
KEPT: list = []


def go_on(d) -> str:
    """The way on after a stop or a pause (cli/run.py), as the user pastes it."""
    return f"continue with --resume {typed(d)}"


def kept(d) -> str:
    """What a run that stopped abnormally leaves, and how to go on: where a file of
    the run is now no file (best.pt, a folder made while it trained), first moving
    it away, as --resume says (it said '--resume DIR', which then refused)."""
    if d in CLEARING:  # not 'last.pt is kept (--resume)': being removed, or gone
        return (f"--overwrite had begun removing the old run's files from {d}; the "
                "same command again finishes that")
    if d in UNCLEARED:  # not 'last.pt is kept (--resume)' alone: asked to start over
        return (f"--overwrite had not begun: the old run in {d} is untouched; "
                f"--resume {typed(d)} continues it, and the same command again "
                "starts over")
    path = os.path.join(d or "", "last.pt")
    odd = d and _no_file(d)
    if d and os.path.isfile(path):
        return (f"{path}, the last checkpoint written, is kept" + (
            f"; {odd}: move it away, and --resume {typed(d)} goes on from that"
            if odd else f" (--resume {typed(d)})"))
    if d and (what := not_regular(path)):  # not 'starts it again': --resume refuses
        return f"{path} is {what}, not a file of the run; move it away"  # as it does
    if odd:
        return f"{not_yet(d)}; {odd}: move it away"
    return not_yet(d) + (f" (--resume {typed(d)} starts it again)"
                         if d and is_run_dir(d) else "")


def appeared(d) -> str:
    """After 'a file appeared there while we ran' at --out (files.atomic_path): the
    model is last.pt, and --resume writes --out once that file is moved away (and
    draws the curves.png the run's end, stopped there, did not)."""
    curves = ("" if os.path.lexists(os.path.join(d, "curves.png"))
              or importlib.util.find_spec("matplotlib") is None
              else " and draws its curves.png, not drawn")
    return (f"the model is {d}/last.pt; move that file away, and --resume "
            f"{typed(d)} writes the model there{curves}")


def _no_file(d: str) -> str | None:
    """'DIR/best.pt is a directory, not a file of the run' for the first of the
    run's other files that is there and no file, else None."""
    for name in OTHERS:
        path = os.path.join(d, name)
        if what := not_regular(path):
            return f"{path} is {what}, not a file of the run"
    return None


def status(e: OSError) -> int:
    """A run's failed write: 1, the machine's (a full disk), or 2 where the file it
    replaces is now a folder, a FIFO or a device (files.atomic_path refuses it):
    input to fix, as --resume says of it."""
    return 2 if e.errno == errno.EINVAL and not_regular(e.filename or "") else 1


def after_nan(d: str) -> str:
    """What a run stopped by a non-finite loss leaves, and how to go on: its
    last.pt, the last save before the NaN (its weights may already be broken), is
    no way on, as --resume repeats the same steps with the same options."""
    last = os.path.join(d, "last.pt")
    way = "start over with other options and --overwrite"
    return (f"{last}, the last checkpoint saved before it, is kept, but --resume "
            f"{typed(d)} repeats the same steps; {way}" if os.path.exists(last) else
            f"{not_yet(d)}; {way}")  # best.pt perhaps (--eval-every < --save-every)


LOCKED: dict = {}  # each run folder this process locked: its (device, inode)


def identity(d: str):
    try:
        st = os.stat(d)
    except OSError:  # gone
        return None
    return st.st_dev, st.st_ino


def _went_away(d) -> bool:
    """The run folder this process locked is gone from its name, or another one."""
    return bool(d) and LOCKED.get(os.path.abspath(d), identity(d)) != identity(d)


def in_run_dir(d: str, name: str) -> str:
    """`d/name`, for a checkpoint about to be written: FileNotFoundError (as a
    metrics line gets) if the run folder went away (`mv run run2` mid-run). Else
    save_checkpoint, which makes its folder for the library's users, made `run`
    again, and the run ended there, exit 0, with no config.json to resume it."""
    path = os.path.join(d, name)
    if _went_away(d):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return path


def not_yet(d) -> str:
    """A run without last.pt: what it has written, best.pt perhaps. A run folder
    moved or removed while we ran (`mv run run2`) may hold some: not 'none yet'."""
    if _went_away(d):
        return (f"the run folder {d} went away while it trained (moved or "
                "removed?); its checkpoints, if any, went with it")
    best = os.path.join(d or "", "best.pt")  # the best weights, no training state
    return (f"no last.pt was written yet, only {best}" if d and os.path.isfile(best)
            else "no checkpoint was written yet")
