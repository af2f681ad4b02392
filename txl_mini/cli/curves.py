"""curves.png, drawn as a run stops or ends: a picture of its metrics.jsonl."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import resource
import sys
import warnings

from ..files import atomic_path
from .errors import drop_compile_times, mapped, out_of_memory, why
from .memory import size
from .metrics import resumed_history

PROG = "python -m txl_mini train"
# matplotlib's import and one drawing map about 72 MiB more here; imported with less
# than that left under `ulimit -v`, matplotlib spun for minutes (a probe: 52,174
# failed mmap calls in 3 s) after best.pt, and only kill -9 ended the run
ROOM = 128 * 2**20


def plot_curves(run_dir: str, history: list[dict]) -> bool:
    """curves.png: training and validation bpc by step; False if not drawn. A
    write that fails (a full disk), memory that runs out, or a matplotlib that fails
    to import, is one warning line: the checkpoints before it are written, so the
    run's outcome stands."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY and limit - mapped() < ROOM:
        print(f"{PROG}: warning: curves.png is not drawn: less than {size(ROOM)} is "
              f"left under ulimit -v ({size(limit)}); the checkpoints and "
              "metrics.jsonl are written", file=sys.stderr)
        return False
    try:
        with quiet_matplotlib():
            return _draw(run_dir, history)
    except Exception as e:  # after best.pt and last.pt: the run stands without it
        e.__traceback__ = None  # let go of what the drawing held
        if out_of_memory(e):  # under `ulimit -v`
            drop_compile_times()
            why = "out of memory"
        else:  # matplotlib's settings: MPLBACKEND=bogus, a matplotlibrc's dpi of -5
            why = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
        print(f"{PROG}: warning: cannot draw curves.png: {why}; the checkpoints and "
              "metrics.jsonl are written, only the plot is not", file=sys.stderr)
        return False


def draw_missing(run_dir: str, step: int, did: str) -> str:
    """A finished run's curves.png, drawn from metrics.jsonl if it is missing: the
    run's end did not get that far (a full disk or a kill -9 as it wrote --out, which
    comes first, or the plot). The resume's line after 'finished': `did` (what it
    did with --out) and what it did here; not 'nothing to do' after a warning."""
    path = os.path.join(run_dir, "curves.png")
    if not os.access(run_dir, os.W_OK):  # read-only (a copy on a CD): not ours to mend
        return did
    if os.path.lexists(path) or importlib.util.find_spec("matplotlib") is None:
        return did  # there, or no matplotlib (its summary said so)
    if not plot_curves(run_dir, resumed_history(run_dir, step)):  # the warning said
        done = did.removeprefix("nothing to do (").removesuffix(")")
        return f"{done}; its curves.png is still missing (not drawn: see above)"
    return f"{did}; drew its curves.png, which was missing"


@contextlib.contextmanager
def quiet_matplotlib():
    """matplotlib's own log lines and warnings held back while it loads and draws:
    an unusable MPLCONFIGDIR (/dev/null) printed three lines of its temporary cache
    folder, in the middle of train's. What fails still raises: our warning line."""
    log = logging.getLogger("matplotlib")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def _draw(run_dir: str, history: list[dict]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as e:  # not installed: the summary's note says so
        if e.name != "matplotlib":  # installed, one of its parts missing: a warning
            raise
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
    if train or valid:  # stopped before any metrics line: empty axes, no warning
        ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = os.path.join(run_dir, "curves.png")
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=100, format="png")
    except OSError as e:
        print(f"{PROG}: warning: cannot write {path}: "
              f"{why(e)}; the checkpoints and metrics.jsonl are written, "
              "only the plot is not", file=sys.stderr)
        return False  # not drawn: draw_missing says so
    finally:
        plt.close(fig)
    return True
