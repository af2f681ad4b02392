"""`python -m txl_mini data`: fetch and verify text8, corpus statistics, the offline
corpus (chapters 1 and 2)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from ..corpus import MIN_DISTANCE, make_offline_corpus, write_offline_corpus
from ..data import MAX_OFFLINE_CHARS, OFFLINE_CHARS, read_text_file
from ..files import remove_stale_temps
from ..text8 import TEXT8_CHARS, DataError, load_text8
from . import plural
from .corpus import option_names
from .options import Parser, UsageError, check_output, check_seed, command
from .paths import (
    check_cache_env,
    expand,
    not_a_folder,
    refuse_directory,
    refuse_empty,
    refuse_missing,
)
from .stdout import StdoutFailed, silence

# A temporary file of ours untouched this long is dead: a live write renames its own
# within seconds of creating it (the corpus is generated before the file is opened).
STALE_TEMP_S = 60
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
    print(f"{label}: {plural(raw.size, unit)}, {plural(n_words, 'word')}, "
          f"{raw.size - in_alphabet:,} outside the text8 alphabet, "
          f"unigram entropy {0.0 - (p * np.log2(p)).sum():.3f} bits/char")
    print("  most frequent: "
          + ", ".join(f"{c!r} {n / max(raw.size, 1):.3f}" for n, c in top))


def _cmd_text8(args: argparse.Namespace) -> None:
    refuse_empty(("--path", args.path), ("--cache-dir", args.cache_dir))
    args.path, args.cache_dir = expand(args.path), expand(args.cache_dir, "--cache-dir")
    if args.cache_dir is None:  # read even with --path (where the zip would be)
        check_cache_env()
    try:
        with option_names():
            s = load_text8(args.path, cache_dir=args.cache_dir,
                           progress=not args.quiet)
    except DataError as e:  # a --path not there, or a folder: bad input, exit 2
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
    _print_stats(text, args.file, "char" if text.isascii() else "byte")
    if not text.isascii():  # UTF-8 letters are two bytes or more: say what is counted
        print("  not ASCII: train reads a file one byte per character, as counted "
              "here; a byte outside a-z and A-Z becomes a space")


def _cmd_offline(args: argparse.Namespace) -> None:
    refuse_empty(("--out", args.out), ("--deps-out", args.deps_out))
    args.out, args.deps_out = expand(args.out), expand(args.deps_out)  # --out=~/x
    if not 1000 <= args.chars <= MAX_OFFLINE_CHARS:
        raise UsageError(f"--chars must be between 1,000 and {MAX_OFFLINE_CHARS:,} "
                        f"(text8's size), got {args.chars:,}")
    check_seed(args.seed)  # the seeds train takes, so train can make this corpus
    twice = [d for d in args.distances if args.distances.count(d) > 1]
    if twice:  # planted and listed twice over, as two distances
        raise UsageError(f"--distances {','.join(map(str, args.distances))}: "
                         f"{twice[0]} is given twice")
    short = [d for d in args.distances if d < MIN_DISTANCE]
    if short:  # the generator's own ValueError would name its argument, exit 1
        raise UsageError(f"--distances {short[0]}: a distance must be >= "
                         f"{MIN_DISTANCE} (a name plus filler)")
    # a planting spans its distance and a name, so one as long as the corpus never
    # fits; refused before the generator writes a filler of that length
    _refuse_far([d for d in args.distances if d >= args.chars], args.chars)
    outs = [(o, p) for o, p in (("--out", args.out), ("--deps-out", args.deps_out))
            if p is not None]
    real = [check_output(path, opt) for opt, path in outs]
    if len(real) == 2 and _same_file(*real):  # the TSV would replace the corpus
        raise UsageError(f"--deps-out {args.deps_out} is the same file as --out "
                         f"{args.out}; give the dependencies a file of their own")
    for (opt, path), target in zip(outs, real):
        folder = Path(target).parent
        # bad input, as bench --json's: exit 2, not 1 (a DataError: the data failed)
        if os.path.lexists(folder) and not folder.is_dir():
            raise UsageError(f"{opt} {path}: {folder} {not_a_folder(str(folder))}")
        if not folder.is_dir():
            raise UsageError(f"{opt} {path}: directory {folder} does not exist; "
                             "create it first")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{opt} {path}: directory {folder} is not writable")
        remove_stale_temps(path, older_than=STALE_TEMP_S)  # what a kill -9 left here
    corpus = make_offline_corpus(args.chars, seed=args.seed, distances=args.distances)
    planted = {x.distance for x in corpus.deps}
    empty = [d for d in corpus.distances if d not in planted]
    _refuse_far(empty, args.chars)  # before anything is written
    try:
        write_offline_corpus(corpus, args.out, deps_path=args.deps_out)
    except OSError as e:  # a full disk: what it could not write (nothing replaced)
        raise DataError(f"cannot write {e.filename}: {e.strerror}") from None
    try:
        _report(args, corpus)
        sys.stdout.flush()  # `>/dev/full` fails here, while we can say what is done
    except StdoutFailed as e:
        # exit 1 as for every command whose report is lost (a script reading it gets
        # nothing), but the files are whole: say so, or they are made again for naught
        silence(1)  # the report still buffered goes nowhere, not into a second error
        files = " and ".join(p for p in (args.out, args.deps_out) if p)
        raise StdoutFailed(f"{e}; {files} {'are' if args.deps_out else 'is'} "
                           "written and complete") from None


def _report(args: argparse.Namespace, corpus) -> None:
    print(f"wrote {len(corpus.text):,} chars of corpus '{corpus.name}' "
          f"(seed {args.seed}) to {args.out}")
    for d in corpus.distances:
        deps = [x for x in corpus.deps if x.distance == d]
        first = ", ".join(f"{x.cue}->{x.target}" for x in deps[:3])
        print(f"  distance {d}: {plural(len(deps), 'planted name')} (cue->target: "
              f"{first}, ...)")
    if args.deps_out:
        print("dependencies (cue, target, length, distance) written to "
              f"{args.deps_out}")


def _refuse_far(distances: list[int], chars: int) -> None:
    if distances:
        raise UsageError(f"--distances {distances[0]}: no name fits that far apart "
                         f"in {chars:,} characters; lower it or raise --chars")


def _same_file(a: str, b: str) -> bool:
    """Two resolved paths name one file: equal, or one inode (a bind mount)."""
    return a == b or (os.path.exists(a) and os.path.exists(b)
                      and os.path.samefile(a, b))


def _distances(s: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got "
                                         f"{s!r}") from None


@command(PROG, errors=ERRORS)  # before the subcommand is known
def main(argv=None) -> int:
    """`python -m txl_mini data ...`; returns the exit status."""
    ap = _parser()
    args, extra = ap.parse_known_args(argv)
    if args.cmd is None:  # no subcommand: show what there is
        ap.print_help()
        return 2
    if extra:  # else said by `python -m txl_mini data`, not by the subcommand
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    # its errors and Ctrl-C name it as argparse's own do: `... data offline: error:`
    return command(args.parser.prog, errors=ERRORS)(_run)(args)


def _run(args: argparse.Namespace) -> int:
    args.fn(args)
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
    add("--quiet", action="store_true", help="no progress bar")
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
    p.set_defaults(fn=_cmd_offline, parser=p)
    return ap


if __name__ == "__main__":  # python -m txl_mini.cli.data: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("data")
