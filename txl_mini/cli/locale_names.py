"""A file name that a run recorded as text (config.json, a checkpoint's meta) and this
locale cannot name: config.json holds 'corpé.txt' as characters, and a process whose
file names are ASCII (LC_ALL=C with PYTHONUTF8=0) cannot encode them, while one in
a Latin-1 locale encodes them to other bytes than the UTF-8 ones on disk. Both said
the text 'is gone', though it is there."""

from __future__ import annotations

import os
import sys


def unnamed(path: str) -> str | None:
    """Why `path`, not found, is there all the same (its UTF-8 bytes name a file):
    the words for it; else None, it is gone."""
    try:
        utf8 = path.encode("utf-8", "surrogateescape")  # as a UTF-8 locale wrote it
    except UnicodeEncodeError:
        return None
    try:
        here = os.fsencode(path)  # as this locale does
    except UnicodeEncodeError:  # ASCII: os.path.exists said False, not why
        here = None
    if utf8 == here or not os.path.exists(utf8):
        return None
    return (f"cannot be named in this locale (its file names are "
            f"{sys.getfilesystemencoding()}: LANG/LC_ALL)")
