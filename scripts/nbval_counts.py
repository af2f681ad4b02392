#!/usr/bin/env python3
"""How many code cells of each notebook strict nbval compares exactly, and how many
it does not.

    python scripts/nbval_counts.py                 # every book/*.ipynb, plus totals
    python scripts/nbval_counts.py book/03_*.ipynb # just these

A code cell is
- "exact"   : nbval runs it and compares its outputs character for character (after
              the sanitizers in tests/sanitize.cfg); a cell with no output is compared
              too (it must still print nothing);
- "ignored" : tagged `nbval-ignore-output`: it runs, must not raise, and asserts its
              claim with a tolerance instead (the book's rule for training-, timing-
              and rounding-dependent outputs);
- "skipped" : tagged `nbval-skip`: not run by nbval at all.
nbval also honours the comment markers `# NBVAL_IGNORE_OUTPUT` / `# NBVAL_SKIP` on a
cell's first line; they are counted the same way (the book itself uses tags). Cells
with only whitespace are not counted (nbval ignores them).
Reads the .ipynb JSON only: no kernel, no torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE, SKIP = "nbval-ignore-output", "nbval-skip"


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def classify(cell: dict) -> str | None:
    """'exact', 'ignored' or 'skipped' for a code cell nbval sees; None for other
    cells."""
    src = _source(cell)
    if cell.get("cell_type") != "code" or not src.strip():
        return None
    tags = set(cell.get("metadata", {}).get("tags", []) or [])
    first = src.lstrip().splitlines()[0].strip() if src.strip() else ""
    if SKIP in tags or first.startswith("# NBVAL_SKIP"):
        return "skipped"
    if IGNORE in tags or first.startswith("# NBVAL_IGNORE_OUTPUT"):
        return "ignored"
    return "exact"


def count_cells(notebook: dict) -> dict[str, int]:
    """Counts for one parsed notebook: exact, ignored, skipped, code (their sum)."""
    counts = {"exact": 0, "ignored": 0, "skipped": 0}
    for cell in notebook.get("cells", []):
        kind = classify(cell)
        if kind:
            counts[kind] += 1
    counts["code"] = sum(counts.values())
    return counts


def _share(counts: dict[str, int]) -> str:
    return f"{100 * counts['exact'] / counts['code']:.0f}%" if counts["code"] else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Per notebook: code cells strict nbval compares exactly vs not "
                    f"(tags {IGNORE}, {SKIP}).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to count (default: every book/*.ipynb)")
    parser.add_argument("--json", action="store_true",
                        help="print JSON instead of a table")
    args = parser.parse_args(argv)

    paths = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    if not paths:
        print("nbval_counts: no notebooks found", file=sys.stderr)
        return 1
    rows = {}
    for path in paths:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            print(f"nbval_counts: cannot read {path} as a notebook: {err}",
                  file=sys.stderr)
            return 1
        if (not isinstance(notebook, dict)
                or not isinstance(notebook.get("cells"), list)):
            print(f"nbval_counts: {path} is not a notebook (no 'cells' list)",
                  file=sys.stderr)
            return 1
        rows[path.name] = count_cells(notebook)
    keys = ("exact", "ignored", "skipped", "code")
    total = {k: sum(r[k] for r in rows.values()) for k in keys}

    if args.json:
        print(json.dumps({"notebooks": rows, "total": total}, indent=2))
        return 0
    width = max(len(name) for name in [*rows, "total"])
    header = (f"{'notebook':<{width}}  {'code':>4}  {'exact':>5}  {'ignored':>7}  "
              f"{'skipped':>7}  exact share")
    print(header)
    print("-" * len(header))
    for name, c in [*rows.items(), ("total", total)]:
        if name == "total":
            print("-" * len(header))
        print(f"{name:<{width}}  {c['code']:>4}  {c['exact']:>5}  {c['ignored']:>7}  "
              f"{c['skipped']:>7}  {_share(c):>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
