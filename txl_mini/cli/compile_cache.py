"""torch's compile cache folder, which torch makes as Adam first loads torch._dynamo
(train, bench): checked before any work, so that a folder torch cannot make, or no
temporary folder at all to put it in, is one line naming the setting to change."""

from __future__ import annotations

import getpass
import os
import re
import resource
import tempfile

from .errors import UsageError
from .folders import cannot_make
from .outputs import unreachable


def check_compile_cache() -> None:
    """torch's compile cache folder, which torch makes as Adam first loads
    torch._dynamo (train, bench), checked before any work: one it could not make
    (TORCHINDUCTOR_CACHE_DIR=/dev/null) was a 49-line traceback from bench, and in
    train '/dev/null: File exists', exit 1, naming no setting. The line names the
    variable that put it there: TORCHINDUCTOR_CACHE_DIR, or TMPDIR (TEMP, TMP)."""
    value = os.environ.get("TORCHINDUCTOR_CACHE_DIR")  # '' too: torch's cwd
    path = os.path.abspath(compile_cache() if value is None else value)
    why = unreachable(path) or cannot_make(path)
    if not why and os.path.islink(path) and not os.path.isdir(path):  # a loop too
        why = "it is a symbolic link that leads to no folder; give another folder"
    if why and value is not None:
        raise UsageError(f"TORCHINDUCTOR_CACHE_DIR={value!r} in the environment "
                         f"(torch's compile cache): {why}")
    temp = next((n for n in ("TMPDIR", "TEMP", "TMP") if os.environ.get(n) and
                 os.path.abspath(os.environ[n]) == os.path.dirname(path)), None)
    where = (f"{temp}={os.environ[temp]!r} in the environment puts torch's compile "
             f"cache at {path}" if temp else f"torch's compile cache {path}")
    if why:
        raise UsageError(f"{where}: {why}, or set TORCHINDUCTOR_CACHE_DIR to one")


def compile_cache() -> str:
    """torch's default compile cache folder, as torch._inductor's cache_dir_utils
    names it (importing that makes the folder: it cannot be asked)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}"
    try:
        temp = tempfile.gettempdir()
    except FileNotFoundError as e:  # each folder refused a small file: a traceback
        raise UsageError(no_temp(e)) from None  # from bench, a bare line from train
    return os.path.join(temp, "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def no_temp(e: FileNotFoundError) -> str:
    """The line for tempfile's 'No usable temporary directory found in [...]': the
    folders it tried (read-only, full, not there), or, where not even its 4-byte
    test file may be written (`ulimit -f 0`), the limit, which no folder escapes."""
    tried = e.strerror.partition(" found in ")[2] or "TMPDIR, /tmp, /var/tmp"
    where = (f"torch's compile cache goes in a temporary folder, and Python found "
             f"none it could write a file in (it tried {tried})")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and limit < 4:
        return (f"{where}: the file-size limit (ulimit -f) lets no file be written; "
                "raise it")
    return (f"{where}: set TMPDIR to a writable folder, or TORCHINDUCTOR_CACHE_DIR "
            "to one")
