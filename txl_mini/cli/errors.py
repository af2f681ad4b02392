"""The errors a command line reports in one line: bad input (UsageError, apart from
cli/options.py, which prints it, so that cli/ddp.py, which options asks who may print,
can raise it too) and running out of memory (`out_of_memory`, `starved`)."""

from __future__ import annotations

import atexit
import errno
import os
import re
import resource
import shlex
import sys
from types import ModuleType

from ..shadows import chain, frames, stand_in, words
from ..torch_env import named_in, torch_variables
from .stdout import writable

# What torch's allocators say when they fail: the CPU's DefaultCPUAllocator ("can't
# allocate memory"), a C++ std::bad_alloc, CUDA's OutOfMemoryError ("out of memory").
OOM_WORDS = ("can't allocate memory", "bad_alloc", "out of memory")
# What lowers the memory a command needs, by its options: one wording for the memory
# check before the work (memory.py) and for an out of memory during it (`oom_words`).
RUN_SIZE = "--batch-size, --seg-len or --mem-len"
# train's: the scores and activations grow with the layers as with the batch
TRAIN_RUN_SIZE = "--batch-size, --seg-len, --mem-len or --n-layer"
MODEL_SIZE = "--d-model, --d-inner, --n-layer, --n-head or --d-head"
LOWER = {  # sample and data have no such option
    "train": f"{TRAIN_RUN_SIZE}, or the model's size",
    "evaluate": RUN_SIZE,
    "bench": "--batch, --eval-batch or --max-attn-len, or use --quick",
}


def printable(text: str, stream) -> str:
    """`text` as one line that `stream` can write: control characters escaped as
    repr writes them (a path with a newline broke the line in two), a byte of a file
    name the locale cannot decode (os.fsdecode's surrogate) as \\xfe, and what
    the stream's encoding lacks (PYTHONIOENCODING=ascii) as \\xe9 too (the last two
    as the command's stdout and stderr write them: stdout.writable)."""
    # the same byte as argparse's repr() of it wrote it ('\\udcff' in "invalid choice")
    text = re.sub(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])", r"\1\\x\2", text)
    text = "".join(c if c.isprintable() or "\udc80" <= c <= "\udcff" else
                   repr(c)[1:-1] for c in text)
    return writable(text, stream)


def typed(path) -> str:
    """`path` as a hint prints it for the user to paste (`--resume X`): './-x' for a
    leading '-' (argparse took it for an option), quoted where the shell would split
    it (shlex); and where printable() would alter it on stdout or stderr (a control
    character, a byte not in the locale, a literal '\\udcfe' it reads as one, an é
    under PYTHONIOENCODING=ascii), bash's $'...' of its bytes ('lit\\udcfe' was
    printed as 'lit\\xfe', which named another folder)."""
    p = os.fspath(path)
    p = "./" + p if p.startswith("-") else p
    if all(printable(p, s) == p for s in (sys.__stdout__, sys.__stderr__)):
        return shlex.quote(p)
    return "$'" + "".join("\\" + chr(b) if chr(b) in "\\'" else chr(b) if 32 <= b < 127
                          else {9: "\\t", 10: "\\n", 13: "\\r"}.get(b, f"\\x{b:02x}")
                          for b in os.fsencode(p)) + "'"  # \\n as repr() writes it


class UsageError(Exception):
    """A bad option value; printed as `PROG: error: ...` with exit status `code`."""
    code = 2  # 1: a full disk met as a folder is checked (folders.DiskFull)


class CompileFailed(Exception):
    """torch.compile failed (bench --compile): one line, exit 1."""


def out_of_memory(e: BaseException) -> bool:
    """An allocator's failure, and nothing else: MemoryError, or a RuntimeError
    (torch.cuda.OutOfMemoryError is one) whose text says so."""
    if isinstance(e, MemoryError):
        return True
    return isinstance(e, RuntimeError) and any(w in str(e) for w in OOM_WORDS)


# under this much address space left below `ulimit -v`, memory is known to be short
SHORT = 64 * 2**20


def starved(e: BaseException) -> bool:
    """Out of memory: an allocator's failure (`out_of_memory`), or a SystemError
    raised while under `ulimit -v` less than SHORT is left. CPython's import, one of
    its allocations failed, sometimes raises that ('error return without exception
    set') instead of MemoryError (a probe: train under ulimit -v 700000, in torch's
    lazy import of torch._dynamo). With memory to spare it is a bug: a traceback."""
    if out_of_memory(e):
        return True
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return (isinstance(e, SystemError) and limit != resource.RLIM_INFINITY
            and limit - mapped() < SHORT)


def mapped() -> int:
    """Bytes of address space this process maps now (VmSize); 0 where unknown."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def oom_words(name: str | None, when: str = "", given: list = ()) -> str:
    """`out of memory (lower ...)`, naming an address-space limit where one is set
    (under `ulimit -v` the machine's free memory is not what counts). `given`: the
    command's arguments, whose --quick is not advised again (argparse also takes
    its abbreviation --quic)."""
    fix = f"lower {LOWER[name]}" if name in LOWER else "free some memory first"
    if any(a in ("--quick", "--quic") for a in given):
        fix = fix.removesuffix(", or use --quick")
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY:
        fix += f"; ulimit -v limits this process to {soft / 2**20:,.0f} MiB"
    return f"out of memory{when} ({fix})"


def drop_compile_times() -> None:
    """torch's compiler, once imported, prints its compile times at exit, importing
    `tabulate` to do so: out of memory, that import failed with a 20-line traceback
    after the command's one line. It only logs (at info level): that handler goes."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is not None and hasattr(utils, "dump_compile_times"):
        atexit.unregister(utils.dump_compile_times)


# the packages a command's module loads as it is imported
NEEDED = ("torch", "numpy", "tqdm")
# what the dynamic loader says when `ulimit -v` leaves no room to map a library
MAP_WORDS = ("failed to map segment", "cannot allocate memory")


def too_many_files(doing: str = "") -> str:
    """'Too many open files' is the process' limit, not a file's fault (the file an
    error names may be one of torch's modules): which limit, and to raise it."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return f"too many open files{doing} (ulimit -n {soft}; raise it)"


def why(e: OSError) -> str:
    """An OSError's reason, as a command's line gives it."""
    return too_many_files() if e.errno == errno.EMFILE else str(e.strerror or e)


def import_failed(e: Exception) -> str | None:
    """One line for a package that would not load as a command's module was imported,
    else None (a bug of ours: its traceback). A torch.py in the current folder that
    raised, or libtorch that could not be mapped under `ulimit -v`, gave 25 lines;
    so did a torch.py's ValueError, SyntaxError or partial import's AttributeError."""
    if isinstance(e, OSError) and e.errno == errno.EMFILE:  # a module's file, unopened
        return too_many_files(" to load the command")
    if isinstance(e, ModuleNotFoundError) and e.name in NEEDED:  # not installed
        return (f"this Python ({sys.executable}) has no {e.name}, which txl_mini "
                "needs: pip install -r requirements.txt")
    name, where = _culprit(e)
    # a json.py in the working folder was 'importing torch failed ... from torch's
    # file'; a torch.py that the line below names as `where` keeps that line
    shadow = stand_in(e)
    if shadow and (shadow[0] in sys.stdlib_module_names or shadow[1] != where):
        return words(*shadow)
    if name is None:  # one of our own modules is missing or broken
        return None
    links = chain(e)  # numpy wraps its C extension's error in a long one
    if any(isinstance(c, MemoryError) or any(w in str(c).lower() for w in MAP_WORDS)
           for c in links):
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        return f"out of memory loading {name} " + (
            "(free some memory first)" if soft == resource.RLIM_INFINITY else
            f"(ulimit -v limits this process to {soft / 2**20:,.0f} MiB; raise it)")
    first = next((ln for ln in str(links[-1]).splitlines() if ln.strip()), "")
    return (f"importing {name} failed ({type(links[-1]).__name__}: {first.strip()}) "
            f"from {where}; is it installed, or shadowed by a file of that name?")


def env_refused(e: Exception) -> str | None:
    """One line for torch's own ValueError (or OSError) at import that names a set
    TORCH_* (or PYTORCH_*) variable (PYTORCH_JIT=bogus) or, where none is named,
    quotes its value (TORCH_LOGS_OUT=/no/x), else None: TORCH_LOGS=bogus was
    'importing torch failed (... list of fully) ...; is it installed ...?', exit 1, a
    line cut short that blamed the installation. Its first paragraph is kept (torch
    lists the valid settings after it)."""
    text = str(e)
    ours = torch_variables()
    said = named_in(text, ours) or [
        k for k, v in ours.items()  # as a word: TORCH_LOGS=1's '1', not any '1'
        if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", text)]
    set_ = [f"{k}={ours[k]!r}" for k in said]
    if not (set_ and isinstance(e, (ValueError, OSError))
            and _culprit(e)[0] == "torch" and not stand_in(e)):
        return None
    lines = []
    for line in filter(None, map(str.strip, text.splitlines())):
        if line.endswith(":"):  # 'Valid settings:' and the list after it
            break
        lines.append(line)
    return (f"torch refused {', '.join(set_)} in the environment "
            f"({' '.join(lines) or text.strip()}); fix or unset it")


OURS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _culprit(e: BaseException) -> tuple[str | None, str]:
    """The module whose file raised `e` as it was imported, and that file; (None, "")
    where it is one of ours. That file is a SyntaxError's, else the innermost module
    body run that is not ours (a typing_extensions.py that torch imports is named,
    not torch). Raised by our own code, or a function of another's that it called:
    the module it names (`from torch import nn`, `torch.nn` of an empty torch.py) if
    another's, else ours. (It imports nothing: under `ulimit -n 5` an import failed.)"""
    if isinstance(e, SyntaxError) and not (e.filename or "<").startswith("<"):
        where = os.path.abspath(e.filename)
        return (None, "") if where.startswith(OURS) else (_module_of(where), where)
    stack = [f for f in frames(e.__traceback__)
             if not f.f_code.co_filename.startswith("<frozen ")
             and f.f_globals.get("__name__") != "importlib"]
    theirs = [f for f in stack if not f.f_code.co_filename.startswith(OURS)]
    bodies = [f for f in theirs if f.f_code.co_name == "<module>"]
    if stack and stack[-1] in theirs and bodies:  # raised as another's was loaded
        return (bodies[-1].f_globals.get("__name__", "?").split(".")[0],
                bodies[-1].f_code.co_filename)
    if isinstance(e, AttributeError):  # of a module: `torch.nn` of an empty torch.py
        name = e.obj.__name__ if isinstance(e.obj, ModuleType) else None
    else:  # an ImportError's module: `from torch import nn`, `import torch.nn`
        name = getattr(e, "name", None)
    top = (name or "txl_mini").split(".")[0]
    module = sys.modules.get(top)
    if top == "txl_mini" or (isinstance(e, AttributeError) and not _stand_in(module)):
        return None, ""
    return top, getattr(module, "__file__", None) or getattr(e, "path", None) or "?"


def _stand_in(module) -> bool:
    """A one-file module where a package is installed (an empty torch.py): what it
    lacks is no bug of ours."""
    return not getattr(module, "__file__", "__init__.py").endswith("__init__.py")


def _module_of(path: str) -> str:
    """The top-level module a file belongs to, by the sys.path entry that holds it."""
    for entry in sorted((os.path.abspath(p) for p in sys.path), key=len, reverse=True):
        if path.startswith(entry + os.sep):
            return path[len(entry) + 1:].split(os.sep)[0].removesuffix(".py")
    return os.path.basename(path).removesuffix(".py")
