"""Can a command write into a folder, or make one? Probed before any work, leaving
nothing behind: not even in a folder where names can be made but never removed
(`chattr +a`, append-only), where a probe used to stay for good."""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import sys
import tempfile

from .errors import UsageError
from .stop import held

PROBE = ".probe-"  # an empty file that checks a directory is writable
# linux/fs.h: FS_IOC_GETFLAGS (_IOR('f', 1, long)) and its append-only flag
GET_FLAGS, APPEND_ONLY = 0x80006601 | (struct.calcsize("l") << 16), 0x20
# O_TMPFILE's errors where a file system has none (its probe is named then)
NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)
FULL = (errno.ENOSPC, errno.EDQUOT)  # no room, no inodes, a quota: the machine's


class DiskFull(UsageError):
    """A full disk met as a folder is checked or made: said as the refusal of a
    folder we cannot write is, but exit 1 (the machine failed, as README says), as
    when the write itself meets it a moment later."""
    code = 1


def append_only(folder: str) -> bool:
    """`folder` takes new names but lets none go: an atomic write's rename (its
    temporary's name goes) fails there, and a probe cannot be removed."""
    if not sys.platform.startswith("linux"):  # the ioctl below is Linux's
        return False
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        flags = fcntl.ioctl(fd, GET_FLAGS, bytes(4))
    except OSError:  # a file system without such flags (/proc)
        return False
    finally:
        os.close(fd)
    return bool(int.from_bytes(flags, sys.byteorder) & APPEND_ONLY)


def check_writable(folder: str, what: str, make: str | None = None) -> None:
    """`what` (an option and its value) can write into `folder`: a file can be made
    there and renamed into place (not in an append-only folder); `make`: `folder`'s
    path to make first (os.makedirs), if it is missing. Refused in one line, exit 2;
    a full disk, exit 1 (DiskFull)."""
    try:
        if make:
            os.makedirs(make)
        if append_only(folder):
            raise OSError(errno.EPERM, "it is append-only (chattr +a): a file written "
                          "there cannot be renamed into place")
        _probe(folder)
    except OSError as e:
        refusal = DiskFull if e.errno in FULL else UsageError
        raise refusal(f"{what}: cannot write to {folder}: {e.strerror or e}"
                      ) from None


def _probe(folder: str) -> None:
    """A file made in `folder`, and gone: a nameless one (O_TMPFILE) where the file
    system can, else a named one, made and removed with signals held (a Ctrl-C
    between the two left it, and so the new folder it was in, behind: 1 in 20
    Ctrl-Cs as `data offline` made its --out's)."""
    try:
        os.close(os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600))
        return
    except (AttributeError, OSError) as e:  # AttributeError: not Linux
        if isinstance(e, OSError) and e.errno not in NO_TMPFILE:
            raise
    with held():
        fd, probe = tempfile.mkstemp(dir=folder, prefix=PROBE)
        os.close(fd)
        os.remove(probe)


def sealed(folder: str) -> str | None:
    """Why no new folder may be made in `folder`, else None: it is append-only, so
    one made for a command that then failed could never be removed (it stayed, empty,
    for good)."""
    if append_only(folder or "."):
        return (f"{folder or '.'} is append-only (chattr +a): a folder made there "
                "could not be removed again")
    return None


def cannot_make(path: str) -> str | None:
    """Why the folder `path`, if missing, cannot be made, else None: its first
    missing level is made and removed again (TXL_MINI_CACHE=/proc/self/x passed
    every look, then failed making it, exit 1). A link to nothing is left alone, and
    so is an append-only folder: a folder can be made there, but not removed (where
    one is made, `sealed` refuses it)."""
    top = os.path.abspath(os.path.expanduser(path))
    if os.path.lexists(top):
        return None
    while not os.path.lexists(os.path.dirname(top)):
        top = os.path.dirname(top)
    if append_only(os.path.dirname(top)):
        return None
    try:
        with held():  # as check_writable's probe: a Ctrl-C between left the folder
            os.mkdir(top)
            os.rmdir(top)
    except OSError as e:
        return f"cannot make {path} ({e.strerror}); give another folder"
    return None


def not_a_folder(path: str) -> str:
    """Why `path`, which is there, cannot hold files: the end of 'PATH is ...'."""
    if is_loop(path):  # not 'broken': nothing is missing, it leads nowhere
        return "is a symbolic link loop"
    try:
        os.stat(path)
    except OSError as e:  # a link to something gone
        return f"is a broken symbolic link ({e.strerror})"
    return "is a file, not a directory"


def is_loop(path: str) -> bool:
    """`path` is a symbolic link that leads back to itself (`ln -s loop loop`): a
    file to read there is not 'missing', and a folder cannot be made there."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == errno.ELOOP
    return False


def kernel_path(folder: str, opt: str) -> str:
    """`folder` (to write into or make) as normpath writes it, once that is how the
    kernel reads it too: each '..' cancels the component before it, as typed (a
    stack: '.' and empty ones skipped), and that prefix must be a folder and no
    symbolic link. Refused: a '..' after a folder that is not there (makedirs made
    a/tmp to get through `a/tmp/../../b`, left in run a for ever), after a file,
    and after a symbolic link, even one step removed (`link/./../x`, `link//../x`,
    `link/sub/../../x`): that is x beside the link's target, where makedirs wrote,
    not ./x, which normpath names and every check read. A link not cancelled by a
    '..' is fine. Every option naming a file or folder to write calls this."""
    parts, stack = folder.split(os.sep), []  # stack: indexes of kept components
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part != ".." or not stack or parts[stack[-1]] == "..":
            stack.append(i)  # a leading '..' is the real parent: nothing to check
            continue
        before = os.sep.join(parts[:stack.pop() + 1])
        if why := _before_dots(before):
            raise UsageError(f"{opt}: cannot write to {folder}: {before} {why}; "
                             "give the path without it")
    return os.path.normpath(folder)


def _before_dots(before: str) -> str:
    """Why a '..' after `before` is not the folder normpath names ('' if it is): a
    symbolic link whose target's parent is another folder (the same one, `link ->
    sibling`, is fine), or one to nothing, to a file, or a loop; a file; nothing."""
    if not os.path.islink(before):
        return "" if os.path.isdir(before) else ("is not a folder, so the '..' "
                                                 "after it leads nowhere")
    if not os.path.isdir(before):  # the kernel: ENOENT, ENOTDIR, ELOOP
        target = os.readlink(before)
        what = ("loop" if is_loop(before) else f"to {target}, which is a file" if
                os.path.exists(before) else f"to {target}, which is not there")
        return f"is a symbolic link {what}, so the '..' after it leads nowhere"
    kernel = os.path.realpath(os.path.join(before, os.pardir))
    if kernel == os.path.realpath(os.path.dirname(before) or os.curdir):
        return ""
    return f"is a symbolic link, so the '..' after it is its target's parent, {kernel}"
