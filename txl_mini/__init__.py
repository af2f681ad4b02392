"""txl_mini: a small, readable char-level Transformer-XL (Dai et al., 2019).

Which module serves which chapter. This map is the one place that ties code to the
book's chapters, named by their notebook files book/NN_*.ipynb (NN below);
tests/test_layout.py checks it against what each notebook imports. Docstrings do not
repeat it.

  the model, bottom-up                                        chapters (NN)
    config.py          ModelConfig and its presets            01 03 04 06 07 08
    positional.py      sinusoids: R (relative), U (absolute)  04 06 07
    attention.py       causal mask, rel_shift, terms (a)-(d)  03 04 06
    fast_attention.py  the same attention fused: kv, attend   06
    model.py           memory update, block, TransformerXL    01 03 07 08
  using a model
    text8.py           text8: download, checksum, splits      01 07
    corpus.py          the offline corpus, its word lists     01 02 03 04 05 07 08 09
    data.py            vocabulary, stream batching, segments  01 02 03 04 05 07 08 09
    train.py           the training loop                      01 03 07
    evaluate.py        bits per character, loss by position   01 02 03 05 07
    reach.py           the farthest dependency                03 05 07 09
    kv_cache.py        cached keys, values (kv_store: room)   08
    sample.py          generation                             08
    speed.py           evaluation speed (Table 9)             08
    recl.py            relative effective context length      09
    checkpoint.py      saving and loading (files.py: atomic)  02 04 05 07 08 09
                       (temps.py: its temporaries' locks)
    hf_port.py         names and weights of the HF port       07
  tooling (no chapter imports it)
    cli/               python -m txl_mini train|evaluate|sample|data|bench
    shadows.py         a json.py in the working folder, in one line
    torch_env.py       torch's settings refused, named (TORCH_*)
"""

import os
import sys

if __name__ == "__main__":  # `python txl_mini/__init__.py` (once silent, exit 0)
    sys.exit("use: python -m txl_mini <command> ...")

_COMMANDS = ("train", "evaluate", "sample", "data", "bench")  # as cli/__init__.py's
_SUBCOMMANDS = ("text8", "stats", "offline")  # data's (cli.SUBCOMMANDS["data"])
# `python -m txl_mini.cli.train ...` runs `python -m txl_mini train ...` (its module's
# __main__ block)
_ENTRY_POINTS = [f"cli.{c}" for c in _COMMANDS]
# Python's own options that take a value, attached (-Wignore) or as the next word
_VALUED = "cmWX"


def _launched(argv: list | None = None) -> str | None:
    """The module `python [options] -m X` runs, read from Python's own command line
    (sys.orig_argv) as Python reads it: short flags combine (-um X), and -c, -m, -W
    and -X take a value attached or as the next word. None for -c, a script or stdin.
    (Looking only for words that start with -m missed -um, and `python -um
    txl_mini.cli.options` ran nothing, exit 0.)"""
    words = iter(getattr(sys, "orig_argv", [])[1:] if argv is None else argv[1:])
    for word in words:
        if word == "--check-hash-based-pycs":
            next(words, None)
        elif word[:1] != "-" or word in ("-", "--"):  # a script, stdin
            return None
        elif not word.startswith("--"):
            for i, flag in enumerate(word[1:], 2):
                if flag in _VALUED:
                    value = word[i:] or next(words, "")
                    if flag in "cm":
                        return value if flag == "m" else None
                    break
    return None


def _refuse_launch() -> None:
    """`python -m txl_mini[.X]` imports this package first, before X and torch. In a
    folder since removed, torch's import failed ('Intel oneMKL FATAL ERROR: Cannot
    load libtorch_cpu.so'); and the old spellings (txl_mini.train ...) loaded torch,
    for seconds, only to say where the command line went. Both are said here, the
    latter for every module but the package and its commands' (exit 2). A file of
    the working folder in place of a module (json.py) is said from here on too."""
    if getattr(sys, "argv", [None])[:1] != ["-m"]:  # only while -m looks for X
        return
    run = _launched() or ""
    if run.split(".")[0] != __name__:  # another -m module that imports us
        return
    name = run.removeprefix(f"{__name__}.")
    if run != __name__ and name != "__main__" and name not in _ENTRY_POINTS:
        # one of our modules, which is no command line (txl_mini.train, .model, .cli,
        # .cli.options ...): some printed nothing and exited 0, others runpy's warning
        word = name.removeprefix("cli.").replace("_", " ")
        word = word if word in (*_COMMANDS, "data offline") else "<command>"
        sys.stderr.write(f"use: python -m txl_mini {word} ...\n")
        sys.exit(2)
    command = [name.removeprefix("cli.")] if name in _ENTRY_POINTS else []
    prog = _prog(command + sys.argv[1:])
    _interrupt_early(prog)
    try:
        os.getcwd()
    except FileNotFoundError:
        sys.stderr.write("python -m txl_mini: error: the current folder no longer "
                         "exists; cd somewhere first\n")
        sys.exit(2)
    # a json.py, signal.py there: one line naming it (typing's import below, cli's)
    from . import shadows
    shadows.install(prog)


def _prog(argv: list) -> str:
    """`python -m txl_mini data offline`: the name a command's lines start with, from
    its argv: the command, and data's subcommand ('data: ...' was too short). Here,
    not in cli/, for the early lines (a Ctrl-C's, a json.py's); cli.prog_of is this."""
    n = int(bool(argv) and argv[0] in _COMMANDS)
    if n and argv[0] == "data" and argv[1:2] and argv[1] in _SUBCOMMANDS:
        n = 2
    return " ".join(["python -m txl_mini", *argv[:n]])


def _interrupt_early(prog: str) -> None:
    """A Ctrl-C before the command's own handler is in place (cli.interrupt_once: the
    imports of cli/ and torch take a second) was a KeyboardInterrupt traceback from
    wherever it landed. Here it is the command's one line, exit 130; nothing is
    written yet, so the process may end at once. _signal, not signal: importing
    signal.py takes milliseconds, a Ctrl-C's traceback's worth. SIGINT already
    ignored (a background job) stays so."""
    import _signal
    if _signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler:
        return
    line = f"\n{prog}: interrupted\n".encode()

    def interrupted(signum, frame):
        try:
            if not _other_rank():  # torchrun's Ctrl-C reaches every rank: one line
                os.write(2, line)
        except OSError:  # descriptor 2 closed: the status says it
            pass
        os._exit(130)

    interrupted.txl_mini_early = True  # cli.interrupt_once replaces it
    _signal.signal(_signal.SIGINT, interrupted)


def _other_rank() -> bool:
    """A process of torchrun's other than rank 0 (WORLD_SIZE and RANK set, as
    cli.options.rank_zero reads them, without its imports): its stop line is rank
    0's to print. A Ctrl-C or SIGTERM to torchrun reaches every rank, and each
    printed the line before the command's own, rank-aware handling was in place."""
    env = os.environ
    return env.get("WORLD_SIZE", "1") != "1" and env.get("RANK", "0") != "0"


_refuse_launch()  # before the imports below (typing's take a Ctrl-C's milliseconds)

from importlib import import_module  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

# name -> module. Loaded on first use, not here: `python -m txl_mini` imports this
# package before its command line can catch a Ctrl-C, and torch takes a second to load.
_EXPORTS = {
    "PRESETS": "config", "ModelConfig": "config", "preset": "config",
    "CharVocab": "data", "batchify": "data", "iter_segments": "data",
    "ModelOutput": "model", "TransformerXL": "model", "VanillaTransformer": "model",
}
__all__ = [
    "PRESETS", "CharVocab", "ModelConfig", "ModelOutput", "TransformerXL",
    "VanillaTransformer", "batchify", "iter_segments", "preset",
]

if TYPE_CHECKING:  # what editors and type checkers see
    from .config import PRESETS, ModelConfig, preset
    from .data import CharVocab, batchify, iter_segments
    from .model import ModelOutput, TransformerXL, VanillaTransformer


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
