"""bench --json's file: replaced only where it holds an earlier result (or
nothing), and written once every benchmark ran."""

from __future__ import annotations

import json
import os
import sys

from ..files import ANY, atomic_path, remove_stale_temps, snapshot
from .errors import UsageError, printable
from .outputs import check_output, refuse_in_run
from .paths import expand, refuse_empty, writable_folder
from .rundir import OWN

# keys every result of bench --json holds; a file without them is someone's
BENCH_KEYS = {"device", "torch", "train", "eval", "memory_flatness"}


def check_json(args, made: list):
    """bench's --json, checked before minutes of benchmarking: `~/x` expanded as
    every path option's (it was written to a folder './~'; `~nouser/x` too, where
    every other command refuses it), into args.json, which is both checked and
    written. A missing folder is made, as train's --out's is (each level in
    `made`); a link's target's folder. Returns what the file held (files.snapshot;
    ANY without --json): the write at the end replaces only that."""
    refuse_empty(("--json", args.json))  # else '' wrote no JSON, silently
    if not args.json:
        return ANY
    args.json = expand(args.json, "--json")
    real = check_output(args.json, "--json")
    was = snapshot(real)
    refuse_in_run(args.json, "--json", OWN)  # a run's last.pt, or its folder
    refuse_not_result(args.json, "--json")  # a model: replaced, exit 0
    writable_folder(os.path.dirname(real), f"--json {args.json}", made)
    return was


def wrote(path: str | None) -> int:
    """bench's last line, after its report: where --json's file went (`~/x` and
    a relative path said as the path written). Exit status 0."""
    if path:
        print(printable(f"wrote the results as JSON to {path}", sys.stdout))
    return 0


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
    remove_stale_temps(path)  # a killed bench's, left by its own write
    try:
        with atomic_path(path, was) as tmp:  # never a half file
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(result, f, indent=1)
    except OSError as e:
        return (f"error: cannot write {path}: {e.strerror or e} (the results are "
                "printed above)")
    return None
