"""What a run directory records about its saves: config.json's "saved", the step of
the last last.pt written.

last.pt is written atomically, so it goes missing only by hand. A resume that finds
none must tell a run that stopped before its first checkpoint (NaN at step 2, a
second Ctrl-C, a full disk at the first save: it starts again from step 0, as it
always did) from one whose last.pt was deleted: starting that one again would
replace its best.pt and throw its steps away. Only this record tells them apart (the
metrics of a run stopped during its first save look like those of one that saved).
"""

from __future__ import annotations

import json
import os
import sys

from .errors import printable, typed
from .metrics import last_logged
from .options import UsageError
from .outputs import write_text
from .paths import gone, refuse_dangling, refuse_loop


def note_saved(run_dir: str, step: int) -> None:
    """Record in config.json that last.pt was written at `step`. Only a note: a full
    disk loses it (the next save says the disk is full), never the run."""
    path = os.path.join(run_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        write_text(path, json.dumps({**config, "saved": step}, indent=1))
    except (OSError, ValueError):
        pass


def refuse_lost(run_dir: str, config: dict) -> None:
    """No last.pt in `run_dir`, whose config.json says one was written: one line,
    best.pt untouched. A run that never wrote one starts again. Without the record
    (an older version's config.json, or edited), metrics.jsonl past the run's first
    save (--save-every, or its end) tells it: a failed save stops the run."""
    step, path = config.get("saved"), os.path.join(run_dir, "last.pt")
    if isinstance(step, int) and not isinstance(step, bool):
        raise UsageError(f"{path} {gone(path)}, but the run wrote it at step {step} "
                         f"(config.json records it); put it back to continue, or "
                         f"{start_again(run_dir)}")
    a = config["args"]  # its first save: at --save-every, or its end
    first = min((a[k] for k in ("save_every", "steps") if isinstance(a.get(k), int)),
                default=0)
    if (logged := last_logged(run_dir)) > first:
        raise UsageError(f"{path} {gone(path)}, but the run wrote it (metrics.jsonl "
                         f"records step {logged}, past its first save); put it back "
                         f"to continue, or {start_again(run_dir)}")


def start_again(run_dir: str) -> str:
    """The way out when a run's last.pt is gone or damaged, as the user pastes it."""
    return (f"start the run again with --run-dir {typed(run_dir)} --overwrite and "
            "its options")


def run_checkpoint(run_dir: str) -> str:
    """evaluate's and sample's checkpoint in a run directory: the first there of
    best.pt and last.pt, whatever it is (a best.pt that was a folder, a FIFO or a
    link to a file gone was skipped for last.pt)."""
    found = [n for n in (os.path.join(run_dir, n) for n in ("best.pt", "last.pt"))
             if os.path.lexists(n)]
    if not found:
        raise UsageError(f"{run_dir} is a directory with no best.pt or last.pt in "
                         "it (a run before its first checkpoint?); give a checkpoint")
    refuse_loop(found[0], "a checkpoint")
    refuse_dangling(found[0], "a checkpoint")
    return found[0]


def note_last(path: str, meta: dict, given: str, prog: str) -> None:
    """A run directory (`given`) read through its last.pt (`path`): one note on
    stderr, once every check passed (a refusal stays one line). A run stopped
    before its first validation has no best.pt; its last.pt was used silently. Not
    'stopped': a finished run's best.pt may have been deleted."""
    if not (os.path.isdir(given) and os.path.basename(path) == "last.pt"):
        return
    done, tc = meta.get("steps"), meta.get("train_config")
    total = tc.get("steps") if isinstance(tc, dict) else None
    at = (f" (step {done}" + (f" of {total})" if isinstance(total, int) else ")")
          if isinstance(done, int) else "")
    print(printable(f"{prog}: note: {os.path.dirname(path)} has no best.pt; using "
                    f"its last.pt{at}", sys.stderr), file=sys.stderr)
