"""`python -m txl_mini data`: fetch and verify text8, corpus statistics, the offline
corpus (chapters 1 and 2)."""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from ..data import OFFLINE_CHARS, read_text_file
from ..text8 import TEXT8_CHARS, DataError, load_text8
from . import SUBCOMMANDS, command_parsers, plural
from .corpus import option_names
from .data_offline import cmd_offline
from .errors import printable
from .folders import kernel_path
from .misplaced import misplaced, subparsers
from .options import Parser, UsageError, ascii_only, command, fail
from .outputs import check_cache_env, check_download_folder, unreachable
from .pasted import ODD, pasted_minus, shown
from .paths import expand, refuse_directory, refuse_empty, refuse_missing, refuse_stdin
from .stdout import StdoutFailed, silence
from .typos import closest

PROG = "python -m txl_mini data"
ERRORS = (DataError, ValueError)  # one line, exit 1


def _print_stats(text: str, label: str, unit: str = "char") -> None:
    # (N,)
    raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8)
    counts = np.bincount(raw, minlength=256)
    in_alphabet = sum(int(counts[ord(c)]) for c in TEXT8_CHARS)
    is_space = raw == ord(" ")
    n_words = int(
        (~is_space[1:] & is_space[:-1]).sum() + (raw.size > 0 and not is_space[0])
    )
    p = counts[counts > 0] / max(raw.size, 1)
    top = sorted(((int(counts[ord(c)]), c) for c in TEXT8_CHARS), reverse=True)[:8]
    top = [(n, c) for n, c in top if n]  # not 'z' 0.000 where there are no letters
    print(f"{label}: {plural(raw.size, unit)}, {plural(n_words, 'word')}, "
          f"{raw.size - in_alphabet:,} outside the text8 alphabet, "
          f"unigram entropy {0.0 - (p * np.log2(p)).sum():.3f} bits/char")
    print("  most frequent: "
          + (", ".join(f"{c!r} {n / max(raw.size, 1):.3f}" for n, c in top)
             or "none of the text8 alphabet"))


def _cmd_text8(args: argparse.Namespace) -> None:
    refuse_empty(("--path", args.path), ("--cache-dir", args.cache_dir))
    refuse_stdin(args.path, "text")  # as train's and evaluate's (was 'no such file')
    args.path = expand(args.path, "--path")
    args.cache_dir = expand(args.cache_dir, "--cache-dir", folder=True)
    if args.cache_dir is None:  # read even with --path (where the zip would be)
        check_cache_env()
    else:
        kernel_path(args.cache_dir, "--cache-dir")  # `miss/../c` left ./miss
        if why := unreachable(args.cache_dir):  # else a traceback from pathlib
            raise UsageError(f"--cache-dir {args.cache_dir}: {why}")
    if args.path is None:  # a download into the cache, unless text8.zip is there
        check_download_folder(args.cache_dir, args.cache_dir and
                              f"--cache-dir {args.cache_dir}", option=True)
    try:
        with option_names(args.path):
            s = load_text8(args.path, cache_dir=args.cache_dir,
                           progress=not args.quiet)
    except DataError as e:  # a --path not there or a folder: bad input, exit 2 (one
        # that is not text8: option_names; a read that failed stays 1)
        if args.path is not None and not os.path.isfile(args.path):
            raise UsageError(str(e)) from None
        raise
    print(f"corpus: {s.name} (sha1-verified)")
    for part in ("train", "valid", "test"):
        _print_stats(getattr(s, part), f"{s.name} {part}")


def _cmd_stats(args: argparse.Namespace) -> None:
    refuse_empty(("the file argument", args.file))
    args.file = expand(args.file)
    refuse_directory(args.file, args.file)
    refuse_missing(args.file)  # or a loop
    text = read_text_file(args.file)  # one character per byte, as train reads it
    if not text:  # no statistic of nothing; train and evaluate refuse it alike
        raise UsageError(f"{args.file} is empty: there is no text in it")
    # its name escaped, as train's lines are: a newline or an ESC reached the terminal
    _print_stats(text, printable(args.file, sys.stdout),
                 "char" if text.isascii() else "byte")
    if not text.isascii():  # UTF-8 letters are two bytes or more: say what is counted
        print("  not ASCII: train reads a file one byte per character, as counted "
              "here; a byte outside a-z and A-Z becomes a space")
    if not any(c.isascii() and c.isalpha() for c in text):  # as corpus.py's check
        print("  no letters a-z/A-Z: train refuses it as --path (each of its bytes "
              "would become a space)")


def _distances(s: str) -> tuple[int, ...]:
    def ints(text):
        return tuple(map(ascii_only(int), text.split(",")))  # '١,٢' is not 1,2

    if line := pasted_minus(s, ints):  # '64,−256': the whole value, fixed, named
        raise argparse.ArgumentTypeError(line)
    try:
        return ints(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got "
                                         f"{s!r}") from None


@command(PROG, errors=ERRORS)  # before the subcommand is known
def main(argv=None) -> int:
    """`python -m txl_mini data ...`; returns the exit status."""
    ap, argv = _parser(), sys.argv[1:] if argv is None else list(argv)
    if line := misplaced(argv, subparsers(ap), ("data",), command_parsers):
        return fail(PROG, f"error: {line}")
    if argv and argv[0] not in (subs := subparsers(ap)) and not (  # '—offline':
            argv[0][:1] == "-" or ODD.match(argv[0])):  # the parser's pasted_option
        near = closest(argv[0], subs)  # `data tex8`: as `Train` (not 'argument cmd')
        hint = f"did you mean {near[0]}?" if near else f"{', '.join(subs)}; --help"
        return fail(PROG, f"error: unknown command {argv[0]!r} of data ({hint})")
    args, extra = ap.parse_known_args(argv)
    if args.cmd is None:  # one line, as the bare `python -m txl_mini` (was the usage)
        names = ", ".join(SUBCOMMANDS["data"])
        what = (f"{shown(extra[:1])} is no option of data nor of its commands; "
                if extra else "")  # `data --verbose`: the word was dropped
        return fail(PROG, f"error: {what}which data? ({names}; --help lists them)")
    if extra:  # else said by `python -m txl_mini data`, not by the subcommand
        args.parser.unrecognized(extra)
    # its errors, Ctrl-C and a stdout that fails name it as argparse's own do:
    # `... data offline: error:` (a stdout failing at the exit's flush said `data:`)
    return command(args.parser.prog, errors=ERRORS + (StdoutFailed,))(_run)(args)


def _run(args: argparse.Namespace) -> int:
    try:
        args.fn(args)
        sys.stdout.flush()  # `>/dev/full` fails here, in the subcommand
    except StdoutFailed:
        silence(1)  # what is still buffered goes nowhere: no second line at the exit
        raise
    return 0


def _parser() -> Parser:
    ap = Parser(prog=PROG,
                description="Fetch and verify text8, print corpus statistics, or "
                "write the offline corpus.")
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("text8", help="download (or read) text8, verify it, print "
                       "split statistics")
    add = p.add_argument
    add("--path", help="local text8.zip or unzipped text8 file (no download)")
    add("--cache-dir", help="where to keep text8.zip (default: $TXL_MINI_CACHE, else "
        "$XDG_CACHE_HOME/txl_mini, else ~/.cache/txl_mini)")
    add("--quiet", "--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(fn=_cmd_text8, parser=p)
    p = sub.add_parser("stats", help="character statistics of any text file")
    p.add_argument("file", help="the text file")
    p.set_defaults(fn=_cmd_stats, parser=p)
    p = sub.add_parser("offline", help="write the generated offline corpus")
    add = p.add_argument
    add("--chars", type=int, default=OFFLINE_CHARS, help="corpus length in characters "
        "(the size train generates for --corpus offline)")
    add("--seed", type=int, default=0, help="random seed; same seed, same text")
    add("--distances", type=_distances, default=(64, 256, 512), help="comma-separated "
        "planted dependency distances (default: 64,256,512)")
    add("--out", required=True, help="output text file")
    add("--deps-out", help="optional TSV of the plantings: cue target length distance")
    add("--overwrite", action="store_true", help="replace an --out or --deps-out file "
        "that is there (one that holds just what would be written is replaced anyway)")
    p.set_defaults(fn=cmd_offline, parser=p)
    return ap


if __name__ == "__main__":  # python -m txl_mini.cli.data: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("data")
