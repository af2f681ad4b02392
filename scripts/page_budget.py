#!/usr/bin/env python3
"""Measure the book's pages against the page budgets of book/CONVENTIONS.md.

    python scripts/page_budget.py                  # every page of book/: report only
    python scripts/page_budget.py book/01_*.ipynb  # these pages; exit 1 if one is over

Per page it prints:
- words  : prose words. Whitespace-separated tokens of the markdown cells (the whole
           file for a .md page), leaving out the code inside ``` / ::: code fences (no
           info string, a language, {code-block}, {code-cell}, {code}), the lines of
           `$$ ... $$` and {math} blocks, fence lines (a directive's title counts),
           directive options, HTML tags, and tokens with no letter or digit (a table's
           `|`, `---`). Directive fences holding prose ({note}, {dropdown}, ...) count.
- code   : visible code lines. Every source line of the code cells that are visible:
           not tagged remove-input, hide-input, remove-cell or hide-cell.
- maxcell: the longest visible code cell, in lines.
- output : printed output lines. Stream outputs plus the text/plain of results with no
           rendered alternative (text/html, text/markdown, text/latex, image/*), over
           cells whose output is shown: not tagged remove-output, hide-output,
           remove-cell or hide-cell.
- nocap  : figures without caption or alt text: image outputs of cells whose output is
           not removed (remove-output, remove-cell) and whose metadata lacks
           `mystnb.figure.caption` or `mystnb.image.alt`.
Reads the .ipynb JSON only (no kernel). The budgets are the constants below.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MAX_WORDS = 3000
MAX_CODE_LINES = 150
MAX_CELL_LINES = 25
MAX_OUTPUT_LINES = 60
MAX_UNCAPTIONED = 0

HIDDEN_INPUT = {"remove-input", "hide-input", "remove-cell", "hide-cell"}
HIDDEN_OUTPUT = {"remove-output", "hide-output", "remove-cell", "hide-cell"}
REMOVED_OUTPUT = {"remove-output", "remove-cell"}
RENDERED = ("text/html", "text/markdown", "text/latex", "image/")
# fences whose body is not prose
CODE_INFO = {"", "{code-block}", "{code-cell}", "{code}", "{math}"}

FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(\S*)")
HTML_TAG = re.compile(r"<[^>]*>")
WORDLIKE = re.compile(r"[^\W_]")  # a letter or a digit


@dataclass
class Budget:
    words: int = 0
    code: int = 0
    maxcell: int = 0
    output: int = 0
    nocap: int = 0

    def over(self) -> list[str]:
        """Names of the budgets this page exceeds."""
        limits = {"words": MAX_WORDS, "code": MAX_CODE_LINES, "maxcell": MAX_CELL_LINES,
                  "output": MAX_OUTPUT_LINES, "nocap": MAX_UNCAPTIONED}
        return [k for k, limit in limits.items() if getattr(self, k) > limit]


def _text(x) -> str:
    return "".join(x) if isinstance(x, list) else (x or "")


def _lines(text: str) -> int:
    return len(text.splitlines())


def prose_words(markdown: str) -> int:
    """Words of prose in one markdown text (the definition in the module docstring)."""
    words = 0
    stack: list[tuple[str, bool]] = []  # open fences: (marker, counts as prose)
    in_math = False
    after_directive = False  # options (`:class: note`) follow a directive's first line
    for line in markdown.splitlines():
        stripped = line.strip()
        if in_math:
            in_math = not stripped.endswith("$$")
            continue
        m = FENCE.match(line)
        if m:
            marker, info = m.group(1), m.group(2)
            closes = (stack and not info and marker[0] == stack[-1][0][0]
                      and len(marker) >= len(stack[-1][0]))
            if closes:
                stack.pop()
                after_directive = False
                continue
            if not stack or stack[-1][1]:  # a fence opened inside code is just code
                is_lang = info and not info.startswith("{")
                stack.append((marker, not (info in CODE_INFO or is_lang)))
                after_directive = stack[-1][1]
                if after_directive:  # its title is prose: ":::{dropdown} Solution 1"
                    words += _count(line[m.end():])
                continue
        if stack and not stack[-1][1]:
            continue  # code or math inside a fence
        if after_directive and re.match(r"^\s*:[\w-]+:", line):
            continue  # a directive option, not prose
        after_directive = False
        if stripped.startswith("$$"):
            # $$ on its own line opens a block; `$$ x $$` on one line is the whole block
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            continue
        words += _count(line)
    return words


def _count(text: str) -> int:
    """Tokens with a letter or digit, HTML tags taken out."""
    return sum(1 for tok in HTML_TAG.sub(" ", text).split() if WORDLIKE.search(tok))


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _printed_lines(output: dict) -> int:
    kind = output.get("output_type")
    if kind == "stream":
        return _lines(_text(output.get("text")))
    if kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        if any(k.startswith(RENDERED) for k in data):
            return 0
        return _lines(_text(data.get("text/plain")))
    if kind == "error":
        return len(output.get("traceback", []))
    return 0


def _captioned(cell: dict) -> bool:
    meta = cell.get("metadata", {})
    mystnb = meta.get("mystnb", {})
    caption = mystnb.get("figure", {}).get("caption")
    alt = mystnb.get("image", {}).get("alt")
    return bool(caption) and bool(alt)


def measure_notebook(nb: dict) -> Budget:
    b = Budget()
    for cell in nb.get("cells", []):
        src, tags = _text(cell.get("source")), _tags(cell)
        if cell["cell_type"] == "markdown":
            b.words += prose_words(src)
            continue
        if cell["cell_type"] != "code":
            continue
        if not tags & HIDDEN_INPUT:
            n = _lines(src)
            b.code += n
            b.maxcell = max(b.maxcell, n)
        outputs = cell.get("outputs", [])
        if not tags & HIDDEN_OUTPUT:
            b.output += sum(_printed_lines(o) for o in outputs)
        if not tags & REMOVED_OUTPUT:
            images = sum(1 for o in outputs
                         if any(k.startswith("image/") for k in o.get("data", {})))
            if images and not _captioned(cell):
                b.nocap += images
    return b


def measure(path: Path) -> Budget:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return measure_notebook(json.loads(text))
    return Budget(words=prose_words(text))  # a MyST markdown page: prose only


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", type=Path,
                    help="pages (.ipynb or .md); default: all of book/, report only")
    args = ap.parse_args(argv)
    book = ROOT / "book"
    pages = args.pages or sorted([*book.glob("*.ipynb"), *book.glob("*.md")])
    pages = [p for p in pages if p.name != "CONVENTIONS.md"]  # not a page of the book
    print(f"{'page':34s} {'words':>6s} {'code':>5s} {'maxcell':>7s} {'output':>6s} "
          f"{'nocap':>5s}  over")
    print(f"{'budget':34s} {MAX_WORDS:6d} {MAX_CODE_LINES:5d} {MAX_CELL_LINES:7d} "
          f"{MAX_OUTPUT_LINES:6d} {MAX_UNCAPTIONED:5d}")
    failed = False
    for page in pages:
        b = measure(page)
        over = b.over()
        failed |= bool(over) and bool(args.pages)
        print(f"{page.name:34s} {b.words:6d} {b.code:5d} {b.maxcell:7d} {b.output:6d} "
              f"{b.nocap:5d}  {', '.join(over)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
