"""A run's metrics.jsonl: one JSON object per logged step or validation, appended
as the run goes, cut back by --resume to the steps its last.pt holds."""

from __future__ import annotations

import errno
import json
import os
import sys
from contextlib import suppress

from .outputs import naming, write_text


def read_metrics(run_dir: str) -> list[dict]:
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:  # a byte that is not UTF-8 spoils its line only
        lines = f.readlines()
    out = []
    for i, line in enumerate(lines):
        try:
            record = json.loads(line.decode())
        except ValueError:  # not JSON, or not UTF-8 (a UnicodeDecodeError)
            record = None
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            out.append(record)
        elif i < len(lines) - 1:  # not just the last line, cut off by a crash
            print(f"note: {path} line {i + 1} is not a metrics record; it is left "
                  "out, the lines after it are kept", file=sys.stderr)
    return out


def append_metrics(run_dir: str, record: dict) -> None:
    """One line more; a write that fails (a full disk) is undone: the file as it
    was, or none if it was new (a resume left an empty metrics.jsonl)."""
    path, line = os.path.join(run_dir, "metrics.jsonl"), json.dumps(record) + "\n"
    new = not os.path.exists(path)
    with naming(path), open(path, "ab", buffering=0) as f:  # close() writes nothing
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
