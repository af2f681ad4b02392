"""`python -m txl_mini data offline`: the offline corpus (and its plantings) checked,
made and written (txl_mini/cli/data.py holds the command line)."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from ..corpus import MIN_DISTANCE, deps_tsv, make_offline_corpus, write_offline_corpus
from ..data import MAX_OFFLINE_CHARS
from ..files import remove_stale_temps, snapshot
from ..text8 import DataError
from . import plural
from .errors import printable, why
from .options import UsageError, check_seed
from .outputs import check_output, refuse_in_run
from .paths import expand, not_a_folder, refuse_empty, same_file, writable_folder
from .rundir import OWN, remove_created
from .stdout import StdoutFailed
from .stop import held

# the default --distances, the generator's (train's corpus): one that fits in no
# --chars as small as 1,000 is left empty, as train leaves it, not refused
DEFAULTS = make_offline_corpus.__kwdefaults__["distances"]


def cmd_offline(args: argparse.Namespace) -> None:
    """Every option checked before the corpus is made; refused, nothing is left."""
    refuse_empty(("--out", args.out), ("--deps-out", args.deps_out))
    args.out = expand(args.out, "--out")  # --out=~/x
    args.deps_out = expand(args.deps_out, "--deps-out")
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
    for opt, path in outs:  # a run's checkpoint, or a file in its folder: as train's
        refuse_in_run(path, opt, OWN)  # --out is
    if len(real) == 2 and same_file(*real):  # the TSV would replace the corpus
        raise UsageError(f"--deps-out {args.deps_out} is the same file as --out "
                         f"{args.out}; give the dependencies a file of their own")
    made: list[str] = []  # the files' folders made here: gone if nothing is written
    try:
        corpus = _write(args, list(zip(outs, real)), made)
    finally:
        remove_created(made)  # those still empty
    try:
        _report(args, corpus)
        sys.stdout.flush()  # `>/dev/full` fails here, while we can say what is done
    except StdoutFailed as e:
        # exit 1 as for every command whose report is lost (a script reading it gets
        # nothing), but the files are whole: say so, or they are made again for naught
        files = " and ".join(p for p in (args.out, args.deps_out) if p)
        raise StdoutFailed(f"{e}; {files} {'are' if args.deps_out else 'is'} "
                           "written and complete") from None


def _write(args: argparse.Namespace, files: list, made: list):
    """The corpus (and plantings) made and written to `files`, ((option, path),
    resolved path) each: their folders made if missing, as train makes --out's (in
    `made`); a file there already is replaced if it holds what would be written, or
    with --overwrite."""
    for (opt, path), target in files:
        folder = os.path.dirname(target)
        # bad input, as bench --json's: exit 2, not 1 (a DataError: the data failed)
        if os.path.lexists(folder) and not os.path.isdir(folder):
            raise UsageError(f"{opt} {path}: {folder} {not_a_folder(folder)}")
        writable_folder(folder, f"{opt} {path}", made)
        remove_stale_temps(path)  # what a kill -9 left here
    _refuse_replacing(args, files[:1], args.chars)  # no corpus of that size: at once
    corpus = make_offline_corpus(args.chars, seed=args.seed, distances=args.distances)
    planted = {x.distance for x in corpus.deps}
    empty = [d for d in corpus.distances if d not in planted]
    if args.distances != DEFAULTS:  # train's corpus of that size plants none that
        _refuse_far(empty, args.chars)  # far either: the default's is the same one
    # what the files hold as they are checked: one another process writes from now
    # on (a second `data offline --out` the same file) is left, not replaced silently
    was = tuple(snapshot(target) for _, target in files)
    _refuse_replacing(args, files, corpus.text, deps_tsv(corpus))
    done: list[bool] = []
    try:
        write_offline_corpus(corpus, args.out, deps_path=args.deps_out,
                             hold=lambda: _renaming(done), was=was)
    except OSError as e:  # a full disk, a file that appeared: nothing replaced
        raise DataError(f"cannot write {e.filename}: {why(e)}") from None
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM: held through the renames
        if done:  # it said 'interrupted' alone, as if nothing were written
            names = " and ".join(p for p in (args.out, args.deps_out) if p)
            e.add_note(f"after writing {names} ("
                       f"{'both ' if args.deps_out else ''}complete)")
        raise
    return corpus


@contextmanager
def _renaming(done: list):
    """stop.held around the files' renames; `done` says they all happened, which a
    signal held meanwhile, raised as this ends, cannot tell otherwise."""
    with held():
        yield
        done.append(True)


def _refuse_replacing(args: argparse.Namespace, files: list, *contents) -> None:
    """Each of `files` there already holds its contents (a str, or a length for
    --out's), else it is refused without --overwrite: `data offline --out README.md`
    replaced the user's file silently. The same corpus again is harmless."""
    for ((opt, path), target), want in zip(files, contents):
        if args.overwrite or not os.path.isfile(target):
            continue
        size = want if isinstance(want, int) else len(want)  # ASCII: a byte a char
        have = os.path.getsize(target)
        if have != size or (
                isinstance(want, str) and Path(target).read_bytes() != want.encode()):
            # an empty one (`touch`) has no 'other contents': the refusal says which
            what = " (an empty file)" if have == 0 else ", with other contents"
            raise UsageError(f"{opt} {path} already exists{what}; "
                             "pass --overwrite to replace it")


def _report(args: argparse.Namespace, corpus) -> None:
    # a name with a newline split the line in two: escaped, as on stderr
    print(printable(f"wrote {len(corpus.text):,} chars of corpus '{corpus.name}' "
                    f"(seed {args.seed}) to {args.out}", sys.stdout))
    for d in corpus.distances:
        deps = [x for x in corpus.deps if x.distance == d]
        first = ", ".join(f"{x.cue}->{x.target}" for x in deps[:3])
        print(f"  distance {d}: " + (f"{plural(len(deps), 'planted name')} "
              f"(cue->target: {first}, ...)" if deps else "none planted (too far "
              f"apart for {args.chars:,} characters)"))
    if args.deps_out:
        print(printable("dependencies (cue, target, length, distance) written "
                        f"to {args.deps_out}", sys.stdout))


def _refuse_far(distances: list[int], chars: int) -> None:
    if distances:
        raise UsageError(f"--distances {distances[0]}: no name fits that far apart "
                         f"in {chars:,} characters; lower it or raise --chars")
