"""Writing files so that a reader never sees half of one: one write-then-rename.

Checkpoints, corpora, the text8 download, run directories and the bench's JSON all
write through `atomic_path`, so each of them gets the same guarantees. A symlink is
followed (its target is written and the link kept, as the shell's `>` does), and what
is not a regular file (a device, a FIFO, a directory) is never replaced.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

from .temps import make_locked, sweep

PathLike = Union[str, "os.PathLike[str]"]
TEMP_SUFFIX = ".tmp"
TEMP_EXTRA = len("..") + 8 + len(TEMP_SUFFIX)  # `.NAME.` + _draw()'s 8 + `.tmp`
ANY = object()  # atomic_path's `was` when whatever is there may be replaced


@contextmanager
def atomic_path(path: PathLike, was=ANY) -> Iterator[str]:
    """Yield a temporary path beside `path`; rename it over `path` when the block ends.

        with atomic_path("runs/xl/last.pt") as tmp:
            torch.save(payload, tmp)

    The temporary file is hidden (`.last.pt.XXXX.tmp`) and in the same directory, so
    the rename is atomic: readers see the old file or the new one, never a half file.
    Its bytes are fsync'ed before the rename and the rename itself afterwards, so a
    power cut cannot leave the new name pointing at missing data. If the block raises
    (Ctrl-C included), the temporary file is removed and `path` is untouched; an
    OSError that names the temporary file names `path` instead. `was`: what
    `path` held when the caller checked it (`snapshot`); another file there now, one
    that appeared or changed meanwhile, is left as it is (FileExistsError).
    """
    asked, path = os.fspath(path), write_target(path)
    if path.exists() and not path.is_file():  # the rename would replace /dev/null
        raise OSError(errno.EINVAL, "not a regular file; refusing to replace it",
                      str(path))
    tmp = lock = None
    try:
        while tmp is None:  # named before it is made: a stop from then on removes it
            tmp = str(path.parent / f".{path.name}.{_draw()}{TEMP_SUFFIX}")
            try:  # (mkstemp made it first: a Ctrl-C there left it behind)
                lock = make_locked(tmp)  # held while we write (temps.py says why)
            except FileExistsError:
                tmp = None  # another writer's, or swept: draw again, and leave it be
            except OSError as e:  # it names the temporary, a file nobody asked for
                raise OSError(e.errno, e.strerror, asked) from None
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())  # the bytes are on disk before the name points at them
        os.chmod(tmp, _mode_for(path))  # made 0600 (as mkstemp); a plain file is not
        if why := _publish(tmp, path, was):
            raise FileExistsError(errno.EEXIST, why, asked)
        _fsync_dir(path.parent)
    except OSError as e:
        if e.filename != tmp:
            raise
        raise OSError(e.errno, e.strerror, asked) from None
    finally:
        try:
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
        finally:
            if lock is not None:  # after the unlink: no sweep sees our name unlocked
                os.close(lock)


def _draw() -> str:
    """8 random characters for a temporary's name (TEMP_EXTRA counts them)."""
    return secrets.token_hex(4)


def snapshot(path: PathLike) -> tuple | None:
    """What is at `path` (a link's target) now, None if nothing: its identity, size
    and time of change, which another file there, or one rewritten, changes."""
    try:
        st = os.stat(path)
    except OSError:  # not there, a file where a folder would be (the checks say)
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def changed(path: PathLike, was) -> str | None:
    """Why what is at `path` is not what `was` (snapshot; ANY: anything) says, else
    None: a file appeared there, or the one checked changed (one gone is no loss)."""
    now = None if was is ANY else snapshot(path)
    if now is None or now == was:
        return None
    return ("a file appeared there while we ran" if was is None else
            "it changed while we ran") + "; it is left as it is"


def _publish(tmp: str, path: Path, was) -> str | None:
    """`tmp` renamed to `path`, unless `path` is no longer what `was` says: else
    why not. A file that appeared since (someone's, made after our checks) was
    replaced silently by the rename; a new name is now made by a hard link, which
    never replaces one."""
    if why := changed(path, was):
        return why
    if was is ANY or was is not None and os.path.exists(path):  # as it was checked
        os.replace(tmp, path)
        return None
    try:
        os.link(tmp, path)
    except FileExistsError:  # made between the look above and now
        return "a file appeared there while we ran; it is left as it is"
    except OSError:  # a file system without hard links (vfat): as before
        os.replace(tmp, path)
        return None
    os.unlink(tmp)
    return None


def write_target(path: PathLike) -> Path:
    """The file a write to `path` replaces: a symlink's target, else `path` itself.

    Renaming over the link itself would turn it into a plain file and leave the file
    it points to stale; the command-line checks (cli/options.py) resolve the same way.
    A /proc magic link (/dev/stdout to a pipe) stands for itself: realpath gives
    /proc/PID/fd/pipe:[N], which is not there, and it would be taken as a new file.
    """
    real = os.path.realpath(path)
    return Path(path if os.path.exists(path) and not os.path.exists(real) else real)


def name_too_long(path: PathLike, extra: int = TEMP_EXTRA) -> str | None:
    """Why `atomic_path(path)` would fail for its names' lengths alone, else None:
    the file's name, TEMP_EXTRA bytes longer as its temporary's, a folder's name still
    to be made, or the whole path, longer than the file system takes. (The write
    found it only at its end: train's --out after the whole run.) `extra` 0: why a
    file to read cannot be there, said the same way (not 'File name too long')."""
    path = write_target(path)
    level = path.parent
    while not os.path.exists(level):  # pathconf needs a folder that is there
        level = level.parent
    try:
        name_max = os.pathconf(level, "PC_NAME_MAX")
        path_max = os.pathconf(level, "PC_PATH_MAX")
    except (OSError, ValueError):  # not known here: the write will say
        return None
    made = path.parent.relative_to(level).parts
    longest = max((os.fsencode(n) for n in made), key=len, default=b"")
    if len(longest) > name_max:
        return (f"a folder's name is too long ({len(longest):,} bytes; at most "
                f"{name_max})")
    size = len(os.fsencode(path.name)) + extra
    if size > name_max:
        return (f"the file name is too long ({size - extra:,} bytes; at most "
                f"{name_max - extra} here)")
    if len(os.fsencode(path)) + extra >= path_max:
        return f"the path is too long (at most {path_max - extra - 1:,} bytes)"
    return None


def too_long_to_read(path: PathLike) -> str | None:
    """Why no file can be at `path` for its names' lengths (the OS's bare 'File name
    too long'), said as a write's are (name_too_long): a folder's name, the file's,
    or the whole path, with its length and the bound; else None."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return name_too_long(path, extra=0) or e.strerror
    return None


def not_a_file(p: Path, missing: bool = True) -> str | None:
    """Why `p` is no regular file to read or replace, else None (also where it is
    missing, unless not `missing`): a name too long is said, where pathlib's
    is_file() raised it, and a link to nothing names where it points."""
    try:
        mode = p.stat().st_mode
    except OSError as e:
        if e.errno != errno.ENOENT:
            return f"{p}: {too_long_to_read(p) or e.strerror}"
        if os.path.islink(p):
            return f"{p} is a link to {os.readlink(p)}, which is not there"
        return f"no such file: {p}" if missing else None
    if stat.S_ISREG(mode):
        return None
    return f"{p} is " + ("a directory" if stat.S_ISDIR(mode) else "a FIFO, not a "
                         "regular file" if stat.S_ISFIFO(mode) else "a device or "
                         "socket, not a regular file")


def no_folder_at(path: str) -> str | None:
    """Why `path` cannot be there, for something not a folder where it names one
    (`best.pt/`, `notes.txt/x.pt`, `/dev/null/`, a FIFO's `ff/`: ENOTDIR): 'X is a
    file, not a directory' ('X is not a directory'), else None."""
    head = path.rstrip("/") if path.endswith("/") else os.path.dirname(path)
    while head and not os.path.exists(head):
        head = os.path.dirname(head)
    if not head or os.path.isdir(head):
        return None
    return f"{head} is " + ("a file, not a directory" if os.path.isfile(head) else
                            "not a directory")


def sha1_file(path: PathLike) -> str:
    """The sha1 of the file's bytes (read in blocks, not whole)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha1").hexdigest()


def _mode_for(path: Path) -> int:
    """The mode `open(path, "w")` would give: the old file's, else 0666 less umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def remove_stale_temps(path: PathLike) -> list[str]:
    """Remove temporary files `atomic_path(path)` left behind (kill -9, power cut):
    those named as its temporaries whose writer is gone (temps.sweep), at any age; a
    write in progress in another process stays. Returns the removed paths. Only the
    names _draw makes, `.NAME.` + 8 lowercase hex + `.tmp`: `.c.txt.backup.tmp` is
    someone's (and NAME is taken literally: `a[1].txt`, `*.txt`)."""
    path = write_target(path)  # the temporaries are beside the file a link names
    return sweep(path.parent, re.escape(f".{path.name}.") + "[0-9a-f]{8}"
                 + re.escape(TEMP_SUFFIX))


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
