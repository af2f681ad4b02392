"""Where text8 is kept (its cache folder), and the errors text8 raises: here, with
the folder they may name, so that text8.py keeps to the download and the split."""

from __future__ import annotations

import os
from pathlib import Path


class DataError(RuntimeError):
    """A corpus could not be obtained or failed verification; the message says what
    to do (raised `from None`: it is the whole story, urllib's chain is noise)."""


class CacheError(DataError):
    """The cache folder cannot be made or written, or its text8.zip is no file."""


def default_cache_dir() -> Path:
    """$TXL_MINI_CACHE, else $XDG_CACHE_HOME/txl_mini, else ~/.cache/txl_mini. A
    CacheError where that needs a home folder and none is known (no HOME, and a user
    id with no passwd entry: env -i, a container's --user): Path.home() raised a bare
    'Could not determine home directory.', a traceback from every text8 command."""
    try:
        if os.environ.get("TXL_MINI_CACHE"):
            return Path(os.environ["TXL_MINI_CACHE"]).expanduser()
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base).expanduser() / "txl_mini"
    except RuntimeError:  # only Path.home() and expanduser() raise it
        raise CacheError(
            f"no home folder is known (HOME is not set, and user id {os.getuid()} has "
            "no entry in the password database), so text8's cache folder has none "
            "to go in. Set TXL_MINI_CACHE to a directory you can write.") from None
