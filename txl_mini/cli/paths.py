"""Paths on a command line. An empty one (`--out ''`, or a shell variable never set)
is refused with one line: taken as a path, it would silently mean the current
directory, the default, or no file at all. A folder to write into is made if
missing, every level of it recorded, so that a run refused later removes them all."""

from __future__ import annotations

import os

from .options import UsageError, check_output, check_writable


def refuse_empty(*given: tuple[str, str | None]) -> None:
    """Each (what, value): the first empty value is `WHAT is empty; give a path`,
    one of only spaces `WHAT is blank; ...` (train's path options say the same)."""
    for what, value in given:
        if value == "":
            raise UsageError(f"{what} is empty; give a path")
        if value is not None and not value.strip():  # ' ': a name nobody means
            raise UsageError(f"{what} is blank; give a path")


def refuse_directory(path: str | None, where: str) -> None:
    """A text file to read that is a directory: bad input, exit 2 (read, it would be
    'cannot read ...: not a regular file', exit 1, as for a disk that failed)."""
    if path is not None and os.path.isdir(path):
        raise UsageError(f"{where} is a directory; give a text file")


def writable_folder(folder: str, opt: str, created: list) -> None:
    """`folder`, made if missing (each level made appended to `created`, outermost
    first), and writable by us."""
    missing, level = [], os.path.normpath(folder)
    while level and not os.path.lexists(level):
        missing.insert(0, level)
        level = os.path.dirname(level)
    if level and not os.path.isdir(level):  # makedirs would say 'File exists'
        what = "it" if level == os.path.normpath(folder) else level
        raise UsageError(f"{opt}: cannot write to {folder}: {what} "
                         f"{not_a_folder(level)}")
    try:
        if missing:
            created.extend(missing)  # before: a makedirs failing half-way made some
            os.makedirs(folder)
    except OSError as e:
        raise UsageError(f"{opt}: cannot write to {folder}: {e.strerror or e}"
                         ) from None
    check_writable(folder, opt)


def not_a_folder(path: str) -> str:
    """Why `path`, which is there, cannot hold files: the end of 'PATH is ...'."""
    try:
        os.stat(path)
    except OSError as e:  # a loop, or a link to something gone
        return f"is a broken symbolic link ({e.strerror})"
    return "is a file, not a directory"


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
    if os.path.isdir(out):
        raise UsageError(f"--out {out} is a directory; give a file name like "
                         f"{os.path.join(out, 'model.pt')}")
    return check_output(out, "--out")  # a device or a FIFO; a symlink: its target
