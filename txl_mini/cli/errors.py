"""The error of a command line's input, apart from cli/options.py (which prints it)
so that cli/ddp.py, which options asks who may print, can raise it too."""


class UsageError(Exception):
    """A bad option value; printed as `PROG: error: ...` with exit status 2."""
