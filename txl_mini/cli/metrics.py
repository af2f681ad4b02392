"""A run's metrics.jsonl: one JSON object per logged step or validation, appended
as the run goes, cut back by --resume to the steps its last.pt holds."""

from __future__ import annotations

import codecs
import errno
import json
import os
import sys
from contextlib import suppress

from .outputs import naming, write_text

PROG = "python -m txl_mini train"  # only train reads them back, on --resume


def resumed_history(run_dir: str, step: int) -> list[dict]:
    """metrics.jsonl's records up to `step` (last.pt's), in order. Lines after the
    last of them are a crash's (logged, never saved) and go quietly; a line that is
    no record, or one out of order (put there by hand: a later step before an earlier
    one's line), is left out with a note, the lines after it kept."""
    path = os.path.join(run_dir, "metrics.jsonl")
    records = _records(path)
    last = max((n for n, (_, r) in enumerate(records) if r["step"] <= step),
               default=-1)  # the last line the run keeps: those after it are cut
    kept: list[dict] = []
    for n, (i, record) in enumerate(records):
        at = record["step"]
        if at > step and n < last:
            _note(path, i, f"is out of order (step {at}, before step "
                  f"{records[last][1]['step']}'s line)")
        elif kept and at < kept[-1]["step"]:
            _note(path, i, f"is out of order (step {at}, after step "
                  f"{kept[-1]['step']}'s line)")
        elif at <= step:
            kept.append(record)
    return kept


def _records(path: str, quiet: bool = False) -> list[tuple[int, dict]]:
    """(line index, record) of each line of `path` that is a metrics record; a
    note for each other line but a last one cut off, unless `quiet`."""
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:  # a byte that is not UTF-8 spoils its line only
        lines = f.readlines()
    if lines:  # an editor's save: a UTF-8 BOM before line 1, not part of its record
        lines[0] = lines[0].removeprefix(codecs.BOM_UTF8)
    out = []
    for i, line in enumerate(lines):
        try:
            record = json.loads(line.decode())
        except ValueError:  # not JSON, or not UTF-8 (a UnicodeDecodeError)
            record = None
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            out.append((i, record))
        elif i < len(lines) - 1 and not quiet:  # not a last line cut off by a crash
            _note(path, i, "is not a metrics record")
    return out


def last_logged(run_dir: str) -> int:
    """The latest step metrics.jsonl has a record of (0: none), read quietly."""
    with suppress(OSError):  # unreadable: no record that tells
        path = os.path.join(run_dir, "metrics.jsonl")
        return max((r["step"] for _, r in _records(path, quiet=True)), default=0)
    return 0


def _note(path: str, i: int, what: str) -> None:
    print(f"{PROG}: note: {path} line {i + 1} {what}; it is left out, the lines "
          "after it are kept", file=sys.stderr)


def append_metrics(run_dir: str, record: dict) -> None:
    """One line more; a write that fails (a full disk) is undone: the file as it
    was, or none if it was new (a resume left an empty metrics.jsonl)."""
    path, line = os.path.join(run_dir, "metrics.jsonl"), json.dumps(record) + "\n"
    new = not os.path.exists(path)
    with naming(path), open(path, "ab", buffering=0) as f:  # close() writes nothing
        if new:  # it is appended to line by line: umask 0222 made it 0444, next refused
            os.fchmod(f.fileno(), os.fstat(f.fileno()).st_mode & 0o777 | 0o200)
        size = f.tell()  # its end
        try:
            if f.write(line.encode()) < len(line):  # a short write: the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            with suppress(OSError):
                f.truncate(size)
                if new:
                    os.remove(path)
            raise


def trim_metrics(run_dir: str, history: list[dict]) -> None:
    """metrics.jsonl with only `history` (a resumed run's lines up to its last.pt;
    a crash leaves some after it), written only if that changes it: no empty one."""
    path, text = os.path.join(run_dir, "metrics.jsonl"), "".join(
        json.dumps(h) + "\n" for h in history)
    try:
        with open(path, "rb") as f:
            same = f.read() == text.encode()
    except FileNotFoundError:
        same = not text
    if not same:
        write_text(path, text)
