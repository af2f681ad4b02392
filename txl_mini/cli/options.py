"""What every command line shares: one-line errors, range checks, device, paths.

Every check here runs before a corpus is built or a step is trained, and every
failure is one line on stderr with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from dataclasses import fields

import torch

from ..config import POS_ENCODINGS, PRESETS, ModelConfig
from .ddp import launched_rank
from .errors import UsageError, printable
from .field_help import field_comments
from .pasted import pasted_minus, shown
from .separator import end_of_options, not_a_value
from .stop import finishing, stopped
from .typos import hint, pasted_option

DEVICES = ("auto", "cpu", "cuda", "mps")


def fail(prog: str, msg: str, code: int = 2, before: str = "") -> int:
    """Print one line (rank 0 only, under torchrun) and return the exit status: the
    command's last, which a signal then must not change (stop.finishing)."""
    finishing()
    if rank_zero():
        print(before + printable(f"{prog}: {msg}", sys.stderr), file=sys.stderr)
    return code


def rank_zero() -> bool:
    """False only for the ranks > 0 of several processes (torchrun sets WORLD_SIZE and
    RANK): a RANK alone, or variables ddp.world_size refuses, silence nothing."""
    return launched_rank() == 0


def command(prog: str, errors: tuple = ()):
    """Decorate a command's `main(argv) -> status`: Ctrl-C one line and 130 (SIGTERM:
    143), a UsageError one line and 2, one of `errors` one line and 1; no traceback."""
    def wrap(run):
        @functools.wraps(run)
        def main(argv=None) -> int:
            try:
                return run(argv)
            except KeyboardInterrupt as e:  # stop.Terminated (SIGTERM) too
                return fail(prog, *stopped(e))
            except UsageError as e:
                return fail(prog, f"error: {e}", e.code)
            except BrokenPipeError:  # `... | head -1`: cli/__init__.py ends it quietly
                raise
            except errors as e:
                return fail(prog, f"error: {e}", 1)
        return main
    return wrap


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows a default only where there is one to show (not None, not False)
    and the help text does not already say it."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if d is None or d is False or d == argparse.SUPPRESS or "default" in text:
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (not the usage block) and exit 2, and
    --help shows the defaults (HelpFormatter); data's subcommands are Parsers too."""

    def __init__(self, **kw):
        super().__init__(formatter_class=HelpFormatter, **kw)
        for kind in (int, float):  # Python's own take any Unicode digit: '١' is 1
            self.register("type", kind, ascii_only(kind))

    def parse_known_args(self, args=None, namespace=None):  # '—chars', pasted
        args = sys.argv[1:] if args is None else list(args)
        if line := pasted_option(args, self):
            raise SystemExit(fail(self.prog, f"error: {line}"))
        ns, extra = super().parse_known_args(args, namespace)
        if line := not_a_value(self, ns):  # --steps=--
            raise SystemExit(fail(self.prog, f"error: {line}"))
        return ns, end_of_options(args, extra)  # a trailing '--' ends the options

    def parse_args(self, args=None, namespace=None):  # as argparse's, but shown
        args, extra = self.parse_known_args(args, namespace)
        return self.unrecognized(extra) if extra else args

    def unrecognized(self, words):  # --mem_len, --stpes: did you mean --mem-len...?
        said = f"unrecognized arguments: {shown(words)}"  # '' quoted, not invisible
        raise SystemExit(fail(self.prog, f"error: {said} ({hint(words, self)})"))

    def error(self, message):
        raise SystemExit(fail(self.prog, f"error: {message} (see --help)"))

    def print_help(self, file=None):
        finishing()  # the last text, as fail's line
        super().print_help(file)


def ascii_only(kind):
    """int or float of ASCII text only (else a ValueError: 'invalid int value')."""
    def number(text):
        if line := pasted_minus(text, kind):  # '−1', U+2212: looks like -1
            raise argparse.ArgumentTypeError(line)
        return kind(text if text.isascii() else "not ASCII")
    return number


def add_common(p: argparse.ArgumentParser, checkpoint: bool = False,
               quiet: str = "no progress bar", threads: str = "") -> None:
    """The options every model-running command has: --device, --threads, --quiet
    (or --no-progress, as bench and data text8 spell it too) and the checkpoint to
    read, for evaluate and sample."""
    if checkpoint:
        p.add_argument("checkpoint", help="a .pt file, or a run directory (its "
                       "best.pt), from python -m txl_mini train")
    p.add_argument("--device", default="auto", choices=DEVICES,
                   help="auto: cuda, else mps, else cpu")
    p.add_argument("--threads", type=int, default=None,
                   help=f"torch CPU threads (default: torch's choice{threads})")
    p.add_argument("--quiet", "--no-progress", action="store_true", help=quiet)


def set_threads(threads) -> None:
    """--threads, checked; None leaves torch's choice. More than 4 per CPU crashes
    some OpenMP builds and never helps."""
    cpus = os.cpu_count() or 1
    if threads is not None and not 1 <= threads <= 4 * cpus:
        raise UsageError(f"--threads must be between 1 and {4 * cpus} (4 per CPU; "
                         f"this machine has {cpus}), got {threads}")
    if threads:
        torch.set_num_threads(threads)


def preset_help() -> str:
    """--preset's help: every preset's size, so a user can choose without the code."""
    sizes = "; ".join(f"{name}: {c.n_layer} layers, d_model {c.d_model}, "
                      f"L={c.seg_len}, M={c.mem_len}" for name, c in PRESETS.items())
    return f"model size ({sizes})"


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_model_options(p: argparse.ArgumentParser) -> None:
    """One option per ModelConfig field, generated (a new field is an option at
    once), its help the field's comment; None = the preset's value."""
    helps = field_comments(ModelConfig)
    types = {"int": int, "float": float, "str": str}
    g = p.add_argument_group("model (every ModelConfig field; default: the --preset's)")
    for f in fields(ModelConfig):
        kw = dict(default=None, help=(helps.get(f.name) or f.name).replace("%", "%%"))
        if f.type == "bool":
            kw["action"] = argparse.BooleanOptionalAction
        elif f.type in types:
            kw.update(type=types[f.type], metavar=f.name.upper())
        else:  # a field no command line can spell (tests/test_cli_options.py fails)
            continue
        if f.name == "pos_enc":
            kw.update(choices=POS_ENCODINGS, metavar=None)
        g.add_argument(flag(f.name), **kw)


def model_config(preset_name: str, args):
    """The preset with every model option given on the command line; a value the
    config refuses is a UsageError naming the option, not the field."""
    over = {f.name: getattr(args, f.name) for f in fields(ModelConfig)
            if getattr(args, f.name, None) is not None}
    try:
        return PRESETS[preset_name].replace(**over)
    except (ValueError, TypeError) as e:
        msg = re.sub(r"ModelConfig\.(\w+)", lambda m: flag(m.group(1)), str(e))
        raise UsageError(msg) from None


SEED_MAX = 2**63 - 1 - 1024  # torch's seed is a signed 64-bit int; ranks add their rank


def check_seed(seed) -> None:
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise UsageError(f"--seed must be between 0 and {SEED_MAX}, got {seed}")


def given(parser: argparse.ArgumentParser, argv) -> set[str]:
    """The options on the command line `argv` (their dests), not left at defaults."""
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


def check_at_least(args, lows: dict[str, int]) -> None:
    """Each option in `lows` (by attribute name) is None or >= its lower bound."""
    for name, low in lows.items():
        v = getattr(args, name)
        if v is not None and v < low:
            raise UsageError(f"{flag(name)} must be >= {low}, got {v}")


# The most train's counts (--steps, --warmup, --batch-size, --eval-every...) may be:
# a signed 64-bit integer, as torch and most readers of config.json hold one; no run
# comes near (a step a nanosecond for 292 years). Past float's range (about 1e308)
# the learning rate, the progress bar and the memory estimate raised OverflowError
# tracebacks, after config.json was written.
MAX_COUNT = 2**63 - 1


def check_counts(args, lows: dict[str, int]) -> None:
    """check_at_least, and each option at most MAX_COUNT."""
    check_at_least(args, lows)
    for name in lows:
        if (v := getattr(args, name)) is not None and v > MAX_COUNT:
            raise UsageError(f"{flag(name)} must be <= {MAX_COUNT:,}, got {v:,}")


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available())


def pick_device(name: str, local_rank: int = 0) -> torch.device:
    """--device: auto = cuda, else mps, else cpu; a named device must exist."""
    if name not in DEVICES:
        raise UsageError(f"--device {name}: choose one of {', '.join(DEVICES)}")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else (
            "mps" if _mps_available() else "cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise UsageError("--device cuda: no CUDA GPU is available to torch")
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    if name == "mps" and not _mps_available():
        raise UsageError("--device mps: the Apple GPU backend is not available")
    return torch.device(name)
