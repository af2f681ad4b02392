"""A file in the working folder named as a module: a scratch json.py, signal.py or a
json/ package. `python -m` puts that folder first on sys.path, so the file is
imported in place of Python's module (or an installed package), and what then failed
blamed another's file ('importing torch failed ... from torch/utils/_pytree.py') or
was a traceback from one of our lines (stop.py's signal.SIGINT). A command says it in
one line naming the file and the fix: cli.errors.import_failed for a package a
command loads, and `install`'s hook for what nothing catches (txl_mini/__init__.py
sets it as a command starts, before its own imports: a typing.py broke those).

Here, not in cli/, because the package's __init__.py (the library) needs it and may
not import cli. It imports only modules Python loaded before it read sys.path[0]."""

import os
import sys

WHY = "the working folder comes first on sys.path under python -m"
# where Python's own modules are: os was loaded before sys.path was read
STDLIB = os.path.dirname(os.__file__) + os.sep


def install(prog: str) -> None:
    """An exception that nothing caught and that a stand-in caused (`stand_in`) is one
    line, `PROG: error: ./json.py shadows ...` (exit 1, Python's for it, as for a
    torch.py that raises); any other keeps its traceback (a bug of ours)."""
    before = sys.excepthook

    def hook(kind, e, tb):
        found = stand_in(e) if isinstance(e, Exception) else None
        if found is None:
            return before(kind, e, tb)
        try:
            sys.stderr.write(f"{prog}: error: {words(*found)}\n")
        except (AttributeError, OSError, ValueError):  # no stderr: the status says it
            pass

    sys.excepthook = hook


def words(name: str, path: str) -> str:
    """`./json.py shadows Python's json module (why); rename it`."""
    folder, why = working_folder() or "", WHY
    if folder and _top(path, folder) == name:
        first = os.path.relpath(path, folder).split(os.sep)[0]
        shown = first + os.sep if os.path.isdir(os.path.join(folder, first)) else first
        try:
            here = folder == os.getcwd()
        except OSError:  # the current folder is gone
            here = False
        shown = os.path.join(os.curdir if here else folder, shown)
    else:  # from another entry of sys.path: PYTHONPATH=scratch, scratch/signal.py
        init = os.path.basename(path).startswith("__init__.")
        shown = os.path.dirname(path) + os.sep if init else path
        why = "its folder comes before Python's own on sys.path: PYTHONPATH?"
    what = (f"Python's {name} module" if name in sys.stdlib_module_names
            else f"the {name} package")
    return f"{shown} shadows {what} ({why}); rename it"


def stand_in(e: BaseException) -> tuple[str, str] | None:
    """The module that a file in the working folder stands in for and that `e` (or
    what it was raised from) is about: (its name, the file), else None. About it: an
    AttributeError of that module, an ImportError of a name from it, or the file
    runs in the traceback (it raised as it loaded, or a function of it did). A file
    there that nothing imported (a test.py, a notes.py) counts for nothing, nor does
    txl_mini itself (run from the repository's root)."""
    folder = working_folder()
    loaded = {}  # name -> file of each module imported from the folder, or of
    for name, module in list(sys.modules.items()):  # Python's own from elsewhere
        path = getattr(module, "__file__", None)
        if "." in name or not isinstance(path, str):
            continue
        if (folder and _top(path, folder) == name) or (
                name in sys.stdlib_module_names and not path.startswith(STDLIB)):
            loaded[name] = path
    for link in chain(e):
        names = [getattr(link, "name", None)] if isinstance(link, ImportError) else []
        if isinstance(link, AttributeError) and isinstance(link.obj, type(sys)):
            names.append(link.obj.__name__)  # `json.JSONEncoder` of a json.py
        for name in names:
            if (top := (name or "").split(".")[0]) in loaded:
                return top, loaded[top]
        for path in _files(link):  # a frame of its file: it raised, or its function
            top = _top(path, folder) if folder else None
            top = top or next((n for n, f in loaded.items() if f == path), None)
            if top is not None:
                return top, path
    return None


def working_folder() -> str | None:
    """The folder sys.path[0] names, where `python -m` (or -c) looks first; None
    under -P or -I, which leave it out."""
    if sys.flags.safe_path or not sys.path:
        return None
    try:
        return os.path.abspath(sys.path[0] or os.curdir)
    except OSError:  # '' for a current folder that is gone
        return None


def chain(e: BaseException) -> list:
    """`e` and what it was raised from, or during (numpy wraps its error)."""
    links = [e]
    while (cause := links[-1].__cause__ or links[-1].__context__) and len(links) < 9:
        links.append(cause)
    return links


def frames(tb):
    """The frames of a traceback, outermost first (traceback.walk_tb's, without
    importing traceback: under `ulimit -n 5` that import failed)."""
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def _files(e: BaseException) -> list:
    """The files an exception names: a SyntaxError's, an ImportError's, its frames'."""
    files = [getattr(e, "filename", None) if isinstance(e, SyntaxError) else None,
             getattr(e, "path", None) if isinstance(e, ImportError) else None]
    files += [f.f_code.co_filename for f in frames(e.__traceback__)]
    return [f for f in files if isinstance(f, str)]


def _top(path: str, folder: str) -> str | None:
    """The top-level module that a file directly in `folder` (json.py) or in a package
    there (json/__init__.py) is, but for this package itself; else None."""
    if not os.path.isabs(path) or os.path.dirname(path) == path:
        return None
    rel = os.path.relpath(path, folder)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    name = rel.split(os.sep)[0].split(".")[0]
    return None if name in ("", __package__) else name
