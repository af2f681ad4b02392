"""The command lines: `python -m txl_mini <command> ...` (tooling; no chapter uses it).

Each command is a module here with a `main(argv) -> exit status`; the library modules
one level up know nothing of argparse, signals or several processes.
"""

from __future__ import annotations

import signal
import sys
from importlib import import_module

from .. import _SUBCOMMANDS, _launched, _other_rank
from .. import _prog as prog_of  # the commands' name: 'python -m txl_mini train'
from .bars import tqdm_refused
from .errors import (
    NEEDED,
    drop_compile_times,
    env_refused,
    import_failed,
    oom_words,
    printable,
    starved,
)
from .pasted import ODD
from .stdout import (
    GuardedStdout,
    QuietStderr,
    StdoutFailed,
    hold_fd_1,
    hold_fd_2,
    silence,
)
from .stop import deferred, first_stop, sigterm_raises, stopped, watch_arrivals
from .typos import closest

COMMANDS = {  # name -> what it does (the module txl_mini.cli.<name> runs it)
    "train": "train a model with a run directory, checkpoints and exact resume",
    "evaluate": "bits per character of a checkpoint (segments or sliding window)",
    "sample": "generate text from a checkpoint",
    "data": "fetch and verify text8, corpus statistics, write the offline corpus",
    "bench": "training and evaluation speed (the paper's Table 9), memory",
}
SUBCOMMANDS = {"data": _SUBCOMMANDS}  # as cli/data.py's parser has
USAGE = "usage: python -m txl_mini <command> [options]   (--help after a command)"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = argv[0] if argv and argv[0] in COMMANDS else None
    prog = prog_of(argv)
    real, sys.stdout = sys.stdout, GuardedStdout(sys.stdout)
    real_err, sys.stderr = sys.stderr, QuietStderr(sys.stderr)
    try:
        try:
            with sigterm_raises():  # from here on SIGTERM ends it as Ctrl-C does
                if name is None:
                    return _list_commands(argv)
                if refused := tqdm_refused():
                    print(f"{prog}: error: {refused}", file=sys.stderr)
                    return 2
                command = _command(name, prog)  # a status: said why it cannot load
                return (command if isinstance(command, int) else
                        command.main(argv[1:]))
        finally:  # a closed pipe or a full device shows here, not at Python's exit
            sys.stdout.flush()
    except KeyboardInterrupt as e:  # what a command does not handle itself: one line
        words, code, before = stopped(e)  # Ctrl-C, or SIGTERM (stop.Terminated)
        if not _other_rank():  # under torchrun, rank 0 says it
            print(f"{before}{prog}: {words}", file=sys.stderr)
        return code
    except BrokenPipeError:  # `... | head -1`: the reader has all it wanted
        for stream in (real, sys.stderr):  # no second error at Python's flush
            silence(stream.fileno())
        return 141  # 128 + SIGPIPE, as a killed writer would
    except (MemoryError, RuntimeError, SystemError) as e:  # an allocator's: one line
        if not starved(e):
            raise
        e.__traceback__ = None  # its frames hold the tensors: let them go first
        print(f"{prog}: error: {oom_words(name, given=argv[1:])}", file=sys.stderr)
        drop_compile_times()
        return 1
    except StdoutFailed as e:  # `>/dev/full`, `>&-`: what was asked is not shown
        print(f"{prog}: error: {e}", file=sys.stderr)
        if real is not None:
            silence(real.fileno())
        return 1
    finally:
        sys.stdout, sys.stderr = real, real_err


def _command(name: str, prog: str):
    """The command's module, whose import loads torch, numpy and tqdm: one that is
    missing, shadowed (a torch.py in the current folder, whatever it raises) or
    cannot be mapped (under `ulimit -v`) is said in one line (and None returned); it
    was a traceback. One of our own modules that raises keeps its traceback."""
    return _load(f"{__name__}.{name}", prog)


def _load(module: str, prog: str):
    """The module, else the exit status after one line saying why it did not load:
    2 where torch refused a setting of the environment (TORCH_LOGS=bogus), else 1."""
    try:
        return import_module(module)
    except Exception as e:  # a torch.py's ValueError or SyntaxError too
        status = 2 if (line := env_refused(e)) else 1
        if not line and (line := import_failed(e)) is None:
            raise
        e.__traceback__ = None
        print(f"{prog}: error: {line}", file=sys.stderr)
        return status


def _list_commands(argv: list) -> int:
    """--help: the commands, on stdout. No command or an unknown one (--version): one
    line naming them, exit 2 (it was the 7-line listing after 'unknown command')."""
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE + "\n\ncommands:")
        for cmd, what in COMMANDS.items():
            print(f"  {cmd:<9} {what}")
        return 0
    if argv and (argv[0][:1] == "-" or ODD.match(argv[0])) and (
            line := _option_first(argv)):  # '—quiet train', '— train' too
        print(printable(f"python -m txl_mini: error: {line}", sys.stderr),
              file=sys.stderr)  # `--quiet train`: not 'unknown command --quiet'
        return 2
    what = f"unknown command {argv[0]!r}" if argv else "which command?"
    hint = f"{', '.join(COMMANDS)}; --help lists them"
    if argv and (near := closest(argv[0], COMMANDS)):  # 'Train', 'evalute'
        hint = f"did you mean {near[0]}?"
    line = f"python -m txl_mini: error: {what} ({hint})"
    print(printable(line, sys.stderr), file=sys.stderr)
    return 2


def _option_first(argv: list) -> str | None:
    """misplaced's line for an option before the command word, if it is one of a
    command's (whose parsers load torch: only here, for this line of error)."""
    from .misplaced import misplaced
    parsers = command_parsers()
    return misplaced(argv, parsers, every=lambda: parsers) if parsers else None


def command_parsers() -> dict | None:
    """name -> each command's parser; None where one cannot load (a broken torch)."""
    parsers = {}
    for name in COMMANDS:
        try:
            module = import_module(f"{__name__}.{name}")
            parsers[name] = getattr(module, "build_parser", None) or module._parser
            parsers[name] = parsers[name]()
        except Exception:  # a broken torch: the line without it
            return None
    return parsers


def plural(n: int, noun: str) -> str:
    """`1 thread`, `2 threads`: a count and its noun, as the commands print them."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def interrupt_once() -> None:
    """For a process that runs a command: the first Ctrl-C raises KeyboardInterrupt
    (one line, 130); later ones are the same request and are ignored. Else a second
    press while the first is reported printed 'interrupted' twice, or a traceback
    from an exit handler of torch's. (Left alone where SIGINT is already ignored,
    as in a background job, or handled by someone else.)"""
    def first(signum, frame):
        if deferred(signum, frame):  # inside an import: raised once it is done
            return
        if not first_stop("SIGINT"):  # a SIGTERM or SIGHUP came first: it names it
            return
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    handler = signal.getsignal(signal.SIGINT)
    # txl_mini/__init__.py's, which held a Ctrl-C during the imports, is Python's too
    if handler is signal.default_int_handler or getattr(handler, "txl_mini_early",
                                                        False):
        signal.signal(signal.SIGINT, first)


def run_process(argv: list) -> None:
    """A process that runs one command (`python -m txl_mini ...`, or a module's
    `python -m txl_mini.cli.NAME ...`): Ctrl-C once, descriptors 1 and 2 held before
    anything opens a file, main(argv), then exit with its status (exit_done). Ctrl-C's
    own handler comes last: until main catches its KeyboardInterrupt, the early one
    (txl_mini/__init__.py) says it."""
    hold_fd_1()
    hold_fd_2()
    watch_arrivals()  # which signal came first, SIGTERM or a Ctrl-C
    interrupt_once()
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's --help and usage errors: their line is out,
        code = e.code  # and a signal in the teardown must not undo it (exit_done)
    exit_done(code)


def run_module(name: str) -> None:
    """`python -m txl_mini.cli.NAME ...` is `python -m txl_mini NAME ...`, through
    main() above: its closed pipe and Ctrl-C end the same way."""
    run_process([name, *sys.argv[1:]])


def exit_done(code: int) -> None:
    """The command is done, its files complete and its line printed. Python and torch
    then take a second or two to tear down, and a Ctrl-C there killed the process by
    the signal (no line) or raised in one of torch's exit handlers; SIGTERM there
    killed it with no line (SIGHUP too). They are ignored from here on, and the process
    exits with the command's status. torch's compile times, which its exit handler
    prints at info level, go too: it imported a tabulate.py there (a traceback)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    drop_compile_times()
    if (ddp := sys.modules.get(f"{__name__}.ddp")) is not None:
        ddp.leave(code)  # a process of torchrun's ends there, without the teardown
    sys.exit(code)


def _preload() -> None:
    """`python -m txl_mini.cli.NAME` imports this package first, then NAME's module,
    whose `import torch` a broken torch made a traceback. Those imports are made
    here, as cli._command makes them for `python -m txl_mini NAME` (one line, exit
    1), after the same check of tqdm's variables (exit 2). Only the imports: the
    command runs from NAME's __main__ block, not inside this package's import, where
    stop.deferred would hold a Ctrl-C to the end (d552a9d, reverted in 91eefbe)."""
    run = _launched() if sys.argv[:1] == ["-m"] else None  # while -m looks for NAME
    name = (run or "").removeprefix(f"{__name__}.")
    if name not in COMMANDS or run == name:
        return
    prog = prog_of([name, *sys.argv[1:]])
    if refused := tqdm_refused():
        print(f"{prog}: error: {refused}", file=sys.stderr)
        sys.exit(2)
    for package in NEEDED:
        if isinstance(status := _load(package, prog), int):
            sys.exit(status)


_preload()  # last: everything above is defined
