"""Paths on a command line. An empty one (`--out ''`, or a shell variable never set)
is refused with one line: taken as a path, it would silently mean the current
directory, the default, or no file at all. A folder to write into is made if
missing, every level of it recorded, so that a run refused later removes them all."""

from __future__ import annotations

import os
import re

from ..files import TEMP_SUFFIX, no_folder_at, too_long_to_read
from .folders import check_writable, is_loop, kernel_path, not_a_folder, sealed
from .kinds import not_regular
from .locale_names import unnamed
from .options import UsageError
from .outputs import (
    check_output,
    no_home,
    refuse_folder_name,
    refuse_in_run,
    refuse_stdout,
)


def refuse_empty(*given: tuple[str, str | None]) -> None:
    """Each (what, value): the first empty value is `WHAT is empty; give a path`,
    one of only spaces `WHAT is blank; ...` (train's path options say the same)."""
    for what, value in given:
        if value == "":
            raise UsageError(f"{what} is empty; give a path")
        if value is not None and not value.strip():  # ' ': a name nobody means
            raise UsageError(f"{what} is blank; give a path")


def expand(path: str | None, opt: str | None = None, folder: bool = False
           ) -> str | None:
    """`~/x` as the home's x, for every path option and argument: `--out=~/x` (no
    shell expands a ~ after '=') or a quoted '~/x' reaches us as typed. A `~user`
    with no such user (or `~` with no home) is refused, naming `opt`: it was kept as
    typed (a folder '~nouser' made here), or pathlib's traceback, exit 1. So is a
    file named as a folder: train read text.txt/ as text.txt, data stats as missing.
    `folder`: `opt` names one (--run-dir), where dropping the '/' is no remedy."""
    if not path:
        return path
    full, named = os.path.expanduser(path), f"{opt + ' ' if opt else ''}{path}"
    if full.startswith("~"):
        raise UsageError(f"{named}: {no_home(path)}")
    if path.endswith(("/", "/.")) and os.path.isfile(os.path.normpath(full)):
        tail = path[path.rindex("/"):]
        fix = "give a directory" if folder else f"drop the trailing '{tail}'"
        raise UsageError(f"{named}: {os.path.normpath(path)} is a file, not a "
                         f"directory; {fix}")
    return full


def refuse_loop(path: str, what: str, where: str | None = None) -> None:
    """An input path (a checkpoint, a text file) that is a loop: one line, exit 2.
    `where`: how the line names it (`--path FILE`), else the path itself."""
    if is_loop(path):
        raise UsageError(f"{where or path} is a symbolic link loop; give {what}")


def refuse_dangling(path: str, what: str, where: str | None = None) -> None:
    """An input path that is a symbolic link to a file gone: said so, exit 2 (not
    'no such file' for a name `ls` shows)."""
    if dangling(path):
        raise UsageError(f"{where or path} {gone(path)}; give {what}")


def dangling(path: str) -> bool:
    """`path` is a symbolic link to nothing (a loop is not: nothing is missing)."""
    return os.path.islink(path) and not os.path.exists(path) and not is_loop(path)


def gone(path: str) -> str:
    """Why a file `path` cannot be opened, the end of 'PATH ...': 'is missing', or
    for a name `ls` shows, 'is a symbolic link to X, which is missing' (or a loop)."""
    if is_loop(path):
        return "is a symbolic link loop"
    return (f"is a symbolic link to {os.readlink(path)}, which is missing"
            if dangling(path) else "is missing")


def choose_run_dir(args) -> str:
    """Set args.run_dir (--resume's, --run-dir, else --out's name without .pt) and
    args.out absolute; returns how messages name the run directory: an option the
    user did not give is not to blame for it."""
    if not (args.resume or args.run_dir or args.out):
        raise UsageError("give --run-dir DIR (where checkpoints and metrics go)")
    refuse_stdout(args.out, "--out")  # before it is made absolute, /here/-
    refuse_folder_name(args.out, "--out")  # as abspath drops a last '/'
    refuse_stdout(args.run_dir, "--run-dir", "folder")
    named = ("--resume" if args.resume else "--run-dir" if args.run_dir else
             f"the run directory of --out {args.out}")
    args.run_dir = args.resume or args.run_dir or os.path.splitext(args.out)[0]
    args.run_dir = args.run_dir.rstrip("/") or "/"  # not runs/x//last.pt
    if args.out is not None:  # recorded absolute: a resume from elsewhere writes it
        # here (as --path); abspath is lexical, so `link/../x` is refused first
        args.out = os.path.abspath(kernel_path(args.out, "--out"))
    return named


def refuse_directory(path: str | None, where: str) -> None:
    """A text file to read that is a directory: bad input, exit 2 (read, it would be
    'cannot read ...: not a regular file', exit 1, as for a disk that failed)."""
    if path is not None and os.path.isdir(path):
        raise UsageError(f"{where} is a directory; give a text file")


def refuse_missing(path: str | None, where: str | None = None) -> None:
    """A text file to read that is not there, a loop, a link to a file gone, or a
    device, FIFO or socket: bad input, exit 2, as a directory is (read, it was
    'cannot read ...: no such file' or '...: not a regular file', exit 1; a dangling
    link said so too, for a name `ls` shows). `where`: how lines name it."""
    if path is not None:
        refuse_loop(path, "a text file", where)
        refuse_dangling(path, "a text file", where)
        refuse_stdin(path, "text")
        if not os.path.exists(path):
            why = (too_long_to_read(path) or no_folder_at(path)  # its lengths;
                   or "no such file")  # /dev/null/, text.txt/x
            raise UsageError(f"cannot read {path}: {why}")
        what = not_regular(path)  # /dev/null: empty; a FIFO blocked; /dev/zero: endless
        if what:
            raise UsageError(f"{where or path} is {what}, not a regular file; give a "
                             "text file")


def refuse_stdin(path: str | None, what: str) -> None:
    """`-` for a file to read, with no file of that name: standard input is never
    read (a text is recorded by name, for every later resume), as `--out -` is no
    standard output (outputs.refuse_stdout); said, not just 'no such file'."""
    if path == "-" and not os.path.lexists(path):
        raise UsageError(f"cannot read -: no such file; '-' names a file here, not "
                         f"standard input: give the {what} as a file name")


def refuse_recorded(path: str, who: str, give: str) -> None:
    """The text a run recorded (evaluate, train --resume, no --path): gone, or no
    regular file now (a FIFO, a folder, a link to a device), said as the recorded
    text (`who`), not as a --path the user never gave, with how to `give` another.
    A FIFO read blocked, a folder failed: 'cannot read ...', exit 1."""
    what = ((unnamed(path) or "is gone") if not os.path.exists(path) else
            f"is {kind}, not a regular file" if (kind := not_regular(path)) else None)
    if what:  # one a locale cannot name is there: unnamed says so
        raise UsageError(f"{path}, {who}, {what}; give it {give}")


# this process's own names for a file it has open (/dev/stdin, /dev/fd/3, ...)
FD_NAME = re.compile(r"/dev/(std(in|out|err)|fd/\d+)|/proc/(self|thread-self|\d+)"
                     r"(/task/\d+)?/fd/\d+")


def refuse_fd_path(path: str | None) -> None:
    """train --path /dev/stdin (< text), /dev/fd/N, /proc/self/fd/N, or a link to
    one: a name only this process has for its text, recorded in config.json, where
    every evaluate and --resume after it failed to find the text: exit 2."""
    step = path and os.path.abspath(path)
    for _ in range(40):  # a link's chain, up to the kernel's own limit
        if not step or FD_NAME.fullmatch(step):
            break
        step = (os.path.normpath(os.path.join(os.path.dirname(step),
                                              os.readlink(step)))
                if os.path.islink(step) else None)
    if step and FD_NAME.fullmatch(step):
        raise UsageError(f"--path {path} is this process's own name for its input, "
                         "which no later evaluate or --resume can read again "
                         "(config.json records it); give the text as a file name")


def writable_folder(folder: str, opt: str, created: list) -> None:
    """`folder`, made if missing (each level made appended to `created`, outermost
    first), and writable by us."""
    missing, level = [], (real := kernel_path(folder, opt))
    while level and not os.path.lexists(level):
        missing.insert(0, level)
        level = os.path.dirname(level)
    if level and not os.path.isdir(level):  # makedirs would say 'File exists'
        what = "it" if level == real else level
        raise UsageError(f"{opt}: cannot write to {folder}: {what} "
                         f"{not_a_folder(level)}")
    if missing and (why := sealed(os.path.dirname(missing[0]))):  # left made, else
        raise UsageError(f"{opt}: cannot make {folder}: {why}; give another folder")
    created.extend(missing)  # before: a makedirs failing half-way made some of them
    check_writable(folder, opt, make=real if missing else None)  # makes them first


def refuse_special(folder: str, names: tuple) -> None:
    """Each of a run's files (`names`) in `folder` that is there: a regular file or a
    link to one. Else refused before anything opens it: a FIFO blocked train's open
    for ever, a link to /dev/zero read until memory ran out, a directory failed
    mid-way naming no cause."""
    for name in names:
        path = os.path.join(folder, name)
        what = not_regular(path)
        if what:
            raise UsageError(f"{path} is {what}, not a file of the run; move it away")


def same_file(a: str, b: str) -> bool:
    """Two paths name one file: the same once links are resolved, or one inode (a
    hard link, a bind mount)."""
    return os.path.realpath(a) == os.path.realpath(b) or (
        os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b))


def refuse_text_as_out(out: str | None, text: str | None) -> None:
    """train --out naming its --path text (also through a link, hard or symbolic):
    the weights would replace the corpus, which a resume reads again."""
    if out and text and same_file(out, text):
        raise UsageError(f"--out {out} is the training text --path {text}; give the "
                         "model a file of its own")


def check_out(out: str, d: str, own: tuple) -> str:
    """--out: a file of its own (returned resolved). Written over the run directory's
    config.json or last.pt, the final weights would leave a run that cannot resume;
    named like the run directory itself, they would fail after the whole run. `own`:
    the names of the run directory's files."""
    real = os.path.realpath(out)
    if real == os.path.realpath(d):
        raise UsageError(f"--out {out} is the run directory itself; give a file name "
                         f"like {out}.pt")
    if real in {os.path.realpath(os.path.join(d, n)) for n in own}:
        raise UsageError(f"--out {out} is the run directory's own "
                         f"{os.path.basename(real)}; give a file outside {d}")
    refuse_in_run(out, "--out", own, "another run", own_dir=d)
    name = os.path.basename(out)  # in `d` (refuse_in_run), a run's sweep removes it
    if name.startswith(".") and name.endswith(TEMP_SUFFIX) and same_file(
            os.path.dirname(real), d):
        raise UsageError(f"--out {out} is named like a temporary file of the run, "
                         "which a later run removes; give another name")
    if os.path.isdir(out):
        raise UsageError(f"--out {out} is a directory; give a file name like "
                         f"{os.path.join(out, 'model.pt')}")
    real = check_output(out, "--out")  # a device or a FIFO; a symlink: its target
    level = os.path.dirname(real)  # a link to a file gone is written through
    while not os.path.lexists(level):  # (its folder made), unless a file is in
        level = os.path.dirname(level)  # the way: then the link is the cause
    if os.path.islink(out) and not os.path.isdir(level):
        raise UsageError(f"--out {out} is a symbolic link to {os.readlink(out)}, "
                         f"which cannot be written: {level} {not_a_folder(level)}; "
                         "remove the link")
    return real
