"""The files a command will write, checked before any work: a folder we can write
into (cli/folders.py), a name the file system takes, and no file that is something
else (a device, a FIFO, another run's checkpoint, a file inside a run directory),
each refused with one line, exit 2."""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager

from ..files import atomic_path, name_too_long, write_target
from ..text8 import CacheError, default_cache_dir
from .errors import UsageError
from .folders import append_only, cannot_make, check_writable, kernel_path, sealed
from .kinds import not_regular


def check_output(path: str, opt: str) -> str:
    """`opt PATH` names a file to write: a new one or a regular file, else refused
    before any work (renamed over, /dev/null or a FIFO would be replaced as a plain
    file). A symlink stands for its target, which is written (files.write_target).
    A name too long for the file system is refused too: the write said so only at
    its end (train's --out after the whole run, bench --json after every benchmark).
    Returns the resolved path, to compare with the command's other files; the
    caller takes what is there now (files.snapshot) to its write at the end, which
    replaces only that."""
    refuse_stdout(path, opt)
    kernel_path(os.path.expanduser(path), opt)  # `link/../x`: one file, not two
    real = str(write_target(path))
    if os.path.islink(real):  # realpath stops at a loop; renamed over, the link goes
        raise UsageError(f"{opt} {path} is a symbolic link loop; give a file name")
    if os.path.isdir(real):
        raise UsageError(f"{opt} {path} is a directory; give a file name")
    refuse_folder_name(path, opt)
    if why := name_too_long(real):
        raise UsageError(f"{opt} {path}: {why}; give a shorter one")
    return real


def refuse_stdout(path: str | None, opt: str, what: str = "file") -> None:
    """`opt -` refused: it wrote a `what` (file, folder) named '-' silently, where
    standard output may be meant, which holds the command's report (the two would
    mix). A file that is there and not a regular one (/dev/stdout, a FIFO) too."""
    if path == "-":
        raise UsageError(f"{opt} - would be a {what} named '-', not standard output "
                         f"(the report goes there); give a {what} name (./- for that "
                         "one)")
    if what == "file" and path and not os.path.isdir(path) and not_regular(path):
        # /dev/stdout, /dev/fd/63 (>(cat)): a pipe, as kinds.not_regular sees it,
        # where write_target's realpath gave a /proc/PID/fd/pipe:[N] not there
        raise UsageError(f"{opt} {path} is not a regular file (a device, FIFO or "
                         "socket); give a file name")


def refuse_folder_name(path: str | None, opt: str) -> None:
    """`opt NAME/`, a file to write named as a folder that is not there (one that
    is: said elsewhere): the '/' was dropped, a file NAME written (train --out
    models/, bench --json res/ or res/., exit 0)."""
    if path and (path.endswith("/") or os.path.basename(path) in (".", "..")) \
            and not os.path.isdir(path):
        raise UsageError(f"{opt} {path} names a folder; give a file name")


def refuse_run_file(path: str, opt: str, own: tuple, run: str = "another run") -> None:
    """`opt PATH` is one of a run's files (`own`: their names) in a folder with a
    config.json: its training state, lost to what we would write (train --out over
    another run's last.pt, even a running one's; data offline --out over its
    best.pt). `run`: how the line names that run."""
    real = os.path.realpath(path)
    folder, name = os.path.split(real)
    if name in own and os.path.isfile(os.path.join(folder, "config.json")):
        raise UsageError(f"{opt} {path} is the {name} of {run}, {folder}; give a "
                         "file outside it")


def refuse_in_run(path: str, opt: str, own: tuple, run: str = "a run",
                  own_dir: str | None = None, kind: str = "file") -> None:
    """`opt PATH` is a run's file (refuse_run_file), or a new file in a run directory
    or a folder below it: the run was then 'not a run directory' for --overwrite (it
    held that file). `own_dir`: train's own --run-dir, where its --out may go (its
    config.json records it), but not into a folder below it (a new run's too).
    `kind`: what to give instead ("folder" for a new run's --run-dir)."""
    refuse_run_file(path, opt, own, run)
    level = first = os.path.dirname(os.path.realpath(path))
    mine = own_dir and os.path.realpath(own_dir)
    while True:
        if (level != first if level == mine else is_run_dir(level)):
            raise UsageError(f"{opt} {path} is inside the run directory {level}; "
                             f"give a {kind} outside it")
        if level == os.path.dirname(level):
            return
        level = os.path.dirname(level)


# fields every config.json of train holds (beside model_class, a string); a
# hand-made {"args": {}, "model": {}, "corpus": {}} passed, and --overwrite then
# replaced the user's own last.pt or metrics.jsonl beside it
RUN_FIELDS = {"args": {"steps", "run_dir", "preset"}, "model": {"n_layer", "d_model"},
              "corpus": {"name"}}


def is_run_dir(d: str) -> bool:
    """True if `d` holds a config.json written by `python -m txl_mini train`."""
    try:
        with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError):
        return False
    return (isinstance(config, dict) and isinstance(config.get("model_class"), str)
            and all(isinstance(config.get(k), dict) and keys <= set(config[k])
                    for k, keys in RUN_FIELDS.items()))


def unreachable(folder: str) -> str | None:
    """Why a folder to write into (text8's cache) cannot even be looked at or made,
    else None: a name too long (a traceback from pathlib's exists(), exit 1), a
    folder we may not enter, or a file in the way (/dev/null: 'cannot create cache
    directory', exit 1, once the command was under way)."""
    path = os.path.expanduser(folder)
    try:
        if os.path.exists(path) and not os.path.isdir(path):  # /dev/null, a file
            return "it is not a directory; give another folder"
        os.stat(path)
    except OSError as e:  # missing: made where it is used
        if e.errno == errno.ENOTDIR:  # a file where a folder above it would be
            level = os.path.dirname(path)
            while not os.path.lexists(level):
                level = os.path.dirname(level)
            return f"{level} is not a directory; give another folder"
        if e.errno == errno.ENAMETOOLONG:  # its lengths, as --out's are said
            why = name_too_long(os.path.join(path, "text8.zip"))
            return f"{why or e.strerror}; give a shorter one"
        if e.errno not in (errno.ENOENT, errno.ELOOP):
            return f"{e.strerror}; give another folder"
    return None


def no_home(path: str) -> str:
    """Why `path`, a ~ or ~user that expands to nothing, is refused."""
    user = path[1:].split("/")[0]
    what = (f"~{user} names the home of user {user!r}, and there is no such user"
            if user else "~ names your home, and none is set ($HOME)")
    return f"{what}; give another path (./{path} for a folder so named)"


CACHE_VARIABLES = ("TXL_MINI_CACHE", "XDG_CACHE_HOME")  # text8's cache, the first set


def check_cache_env() -> None:
    """text8's cache folder from the environment, checked before anything is made:
    `TXL_MINI_CACHE='~nouser/x'` was pathlib's 'Could not determine home directory'
    traceback, exit 1 (and train left its run folder empty); ' ' a cache named ' '
    in the current folder. Its value is quoted: a space shows."""
    name = next((n for n in CACHE_VARIABLES if os.environ.get(n)), None)
    value = os.environ.get(name or "", "")
    where = f"{name}={value!r} in the environment"
    if value and not value.strip():
        raise UsageError(f"{where} is blank; give a folder, or unset it")
    if value and os.path.expanduser(value).startswith("~"):
        raise UsageError(f"{where}: {no_home(value)}")
    if value:  # `m2/../c`: m2 made to get through, left for good
        kernel_path(os.path.expanduser(value), where)
    if value and (why := unreachable(value) or cannot_make(value)):
        raise UsageError(f"{where}: {why}")


def check_download_folder(folder: str | None, named: str | None = None,
                          option: bool = False) -> None:
    """text8's cache folder (`folder`, else the environment's or the default, then
    `named` by its variable), where a download would go (no text8.zip in it yet):
    one append-only (chattr +a), or missing in such a folder, is refused before it
    starts. The download's temporary file, or the folder made for it, could not be
    removed there, and the line named that file. No default folder (no home) is
    refused here too, before a run folder is made; `option`: data text8's
    --cache-dir is another way out."""
    try:
        cache = os.path.abspath(os.path.expanduser(folder or default_cache_dir()))
    except CacheError as e:  # was a traceback from load_text8 (Path.home())
        raise UsageError(f"{e}" + (" Or give --cache-dir DIR." if option else "")
                         ) from None
    name = next((n for n in CACHE_VARIABLES if os.environ.get(n)), None)
    named = named or (f"{name}={os.environ[name]!r} in the environment" if name
                      else f"text8's cache folder {cache}")
    level = cache
    while not os.path.lexists(level):
        level = os.path.dirname(level)
    if level != cache and (why := sealed(level)):
        raise UsageError(f"{named}: cannot make {cache}: {why}; give another folder")
    if not os.path.isfile(os.path.join(cache, "text8.zip")) and append_only(cache):
        check_writable(cache, named)


@contextmanager
def naming(path: str):
    """An OSError while writing `path` names it (a full disk says where)."""
    try:
        yield
    except OSError as e:
        if e.filename:
            raise
        raise OSError(e.errno, e.strerror, path) from None


def write_text(path: str, text: str) -> None:
    """Atomically: a crash leaves the old file or the new one, never half of it."""
    with naming(path), atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
