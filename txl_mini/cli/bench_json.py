"""bench --json's file: replaced only where it holds an earlier result (or
nothing), and written once every benchmark ran."""

from __future__ import annotations

import json
import os

from ..files import ANY, atomic_path
from .errors import UsageError
from .outputs import sweep_temps

# keys every result of bench --json holds; a file without them is someone's
BENCH_KEYS = {"device", "torch", "train", "eval", "memory_flatness"}


def refuse_not_result(path: str, opt: str) -> None:
    """bench's `opt PATH` over a file there: an earlier result (a JSON object with
    BENCH_KEYS; one is a few KB, so at most 1 MiB is read) is replaced, as is an
    empty file (nothing is lost); anything else is refused before any benchmark (a
    model, the corpus: replaced silently by the JSON, exit 0)."""
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return
    try:
        with open(path, "rb") as f:
            result = json.loads(f.read(2**20))
    except (OSError, ValueError):  # not JSON (not UTF-8 included), or longer
        result = None
    if not (isinstance(result, dict) and BENCH_KEYS <= set(result)):
        raise UsageError(f"{opt} {path} exists and is neither an earlier bench "
                         f"result nor an empty file (the only files {opt} "
                         "replaces); give a new file name, or move it away")


def write_json(path: str, result: dict, was=ANY) -> str | None:
    """bench --json: the results written to `path`, else why not (the caller says
    it after its report). Their keys include BENCH_KEYS. `was`: what `path` held
    when bench checked it (bench.check_args); another file there is left alone."""
    sweep_temps(path)  # a killed bench's, left by its own write
    try:
        with atomic_path(path, was) as tmp:  # never a half file
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(result, f, indent=1)
    except OSError as e:
        return (f"error: cannot write {path}: {e.strerror or e} (the results are "
                "printed above)")
    return None
