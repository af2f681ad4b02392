"""What a path is when it is no regular file: one answer for the files a command
reads and the files it writes. os.stat follows a link, /proc's magic links too:
/dev/stdout or /dev/fd/63 is the pipe it stands for, where os.path.realpath gives
/proc/PID/fd/pipe:[N], a name that is not there (taken as a new file to make)."""

from __future__ import annotations

import os
import stat

KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISSOCK, "a socket"))


def not_regular(path: str) -> str | None:
    """What `path` is if it is there but neither a regular file nor a link to one
    ('a FIFO (named pipe)', 'a symbolic link to /dev/zero, a character device');
    None if it is one, or is not there (a link to nothing or a loop included)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    kind = next((k for test, k in KINDS if test(mode)), "not a regular file")
    return (f"a symbolic link to {os.readlink(path)}, {kind}" if os.path.islink(path)
            else kind)
