"""A resumed run's --out: what of it the run wrote, and so may write again.

The run writes --out once, at its end, after the last step's last.pt (Run.save): a
stop before that (Ctrl-C, --pause-at, a validation cut short) leaves it to the
resume. So a resume that has steps left never wrote the file at --out: whatever is
there was put there while the run was stopped (another model, a text) and is
refused, as a new run refuses one without --overwrite (which --resume cannot take).
A finished run's is its own if it holds last.pt's model; missing (its end's write
failed: a full disk), it is written again, but not in a folder gone since (the
run's folders moved: its --out names the old place): that folder is not made,
and the resume exits 2, naming it. A run that failed at its end keeps the folders
it made for --out (leftover.KEPT), so its own --resume writes there.
--out is written atomically (a temporary file renamed), so a damaged file or a text
there is never the run's: it is refused and left as it is."""

from __future__ import annotations

import os

import torch

from ..checkpoint import CheckpointError, build_model, read_checkpoint, save_checkpoint
from .errors import typed
from .leftover import OUT_MADE
from .options import UsageError
from .outputs import naming
from .paths import check_out, writable_folder
from .rundir import OWN, remove_created


def refuse_foreign_out(config: dict, run_dir: str) -> None:
    """The --out of a run with steps left (`config`: its config.json): a file there
    is someone else's, refused before the run goes on, not replaced at its end (the
    resume's own check of --out took it for the run's)."""
    out = recorded(config, run_dir)
    if out and os.path.exists(out):  # a link to nothing: written through, as new
        raise _not_ours(out, run_dir, "holds a file the run did not write (it "
                        "writes --out when it finishes)", "the model there")


def recorded(config: dict, run_dir: str) -> str | None:
    """The --out config.json records: a name in the run directory (or absolute)."""
    out = config["args"].get("out")
    return out and os.path.join(run_dir, out)


def _not_ours(out: str, run_dir: str, what: str, writes: str) -> UsageError:
    """The one line for a file at --out that the resume leaves as it is."""
    return UsageError(f"--out {out} {what}; move it away, and --resume "
                      f"{typed(run_dir)} writes {writes}")


def finish_out(out: str, run_dir: str, ckpt: dict, device) -> tuple[str, int]:
    """A finished run's --out as the run leaves it: last.pt's model. Missing (the
    write failed at the end: a full disk), it is written again, as the run's last
    step would write it; anything else is refused, not replaced: a file that is not
    a txl_mini checkpoint (the run writes --out whole, by a rename) or another
    model (someone's, put there by hand). Returns what was done and the exit
    status: 2 where --out is not written (its folder gone: `train --resume r &&
    use m.pt` must not go on)."""
    path = os.path.join(run_dir, "last.pt")
    real = check_out(out, run_dir, OWN)  # a FIFO, a dead link...
    if os.path.exists(out):
        try:
            have = read_checkpoint(out, device)
        except CheckpointError as e:  # a text, cut short, empty: never our write
            why = str(e).removeprefix(f"{out}: ")
            raise _not_ours(out, run_dir, f"is not a checkpoint the run wrote ({why}); "
                            "it is left as it is", "the model there") from None
        if not _same_model(have, ckpt):
            raise _not_ours(out, run_dir, f"holds a model other than {path}'s",
                            "it again")
        return f"nothing to do (its last.pt, best.pt and {out} are unchanged)", 0
    made: list[str] = list(OUT_MADE)  # made at the start: gone then (moved?)
    writable_folder(os.path.dirname(real), "--out", made)  # a link's folder, gone
    if made and not os.path.lexists(out):  # not made again for a copy: the run,
        # moved, names its old place (a link put at --out is written through)
        remove_created(made)  # its own folder named (mkdir -p: every level at once)
        return (f"--out {out} not written: its folder {made[-1]} is gone (moved?); "
                f"the model is {path} (evaluate and sample take {typed(path)}); "
                f"--resume cannot change --out: make the folder again (mkdir -p "
                f"{typed(made[-1])}) and --resume {typed(run_dir)} writes it there", 2)
    try:
        with naming(out):
            save_checkpoint(out, build_model(ckpt, path, device), ckpt["meta"])
    except OSError:
        remove_created(made)
        raise
    return f"wrote {out} from its last.pt", 0


def _same_model(a: dict, b: dict) -> bool:
    """Two checkpoints of one model: its class, config and every weight."""
    x, y = a["state_dict"], b["state_dict"]
    return (a["model_class"] == b["model_class"] and a["config"] == b["config"]
            and x.keys() == y.keys() and all(torch.equal(x[k], y[k].to(x[k].device))
                                             for k in x))
