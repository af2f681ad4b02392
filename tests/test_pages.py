"""The page budgets of book/CONVENTIONS.md: scripts/page_budget.py counts correctly
(small synthetic notebooks), and every page converted to the conventions keeps to them.

Reads files only (no kernel, no torch).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("page_budget",
                                               ROOT / "scripts" / "page_budget.py")
pb = importlib.util.module_from_spec(_spec)
sys.modules["page_budget"] = pb  # @dataclass looks the module up while it runs
_spec.loader.exec_module(pb)

# THE list of pages that follow book/CONVENTIONS.md and must keep to its budgets. A page
# joins it when it is converted; nowhere else names them.
CONVERTED = {
    "book/intro.md",
    "book/01_vanilla_segmenting.ipynb",
    "book/02_context_fragmentation.ipynb",
    "book/03_recurrence.ipynb",
    "book/04_relative_encoding.ipynb",
    "book/05_relative_memory.ipynb",
    "book/06_efficient_shift.ipynb",
    "book/07_whole_model.ipynb",
    "book/08_evaluation_speed.ipynb",
    "book/09_recl.ipynb",
    "book/recap.md",
}


def _md(src):
    return {"cell_type": "markdown", "source": src, "metadata": {}}


def _code(src, tags=(), outputs=(), **meta):
    return {"cell_type": "code", "source": src, "execution_count": 1,
            "metadata": {"tags": list(tags), **meta}, "outputs": list(outputs)}


def _stream(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def _result(**data):
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {},
            "data": {k.replace("_", "/"): v for k, v in data.items()}}


def _nb(*cells):
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)}


# --- prose words ----------------------------------------------------------------------


def test_words_are_whitespace_tokens_with_a_letter_or_digit():
    assert pb.prose_words("One two, three.\n\nFour - 5") == 5  # "-" is not a word


def test_code_fences_do_not_count_but_prose_directives_do():
    md = ("Intro words here.\n"
          "```python\nx = 1  # not prose\ny = 2\n```\n"
          "```\nbare fence code\n```\n"
          ":::{code-block} bash\nls -la /tmp\n:::\n"
          "```{note}\nA note of six words here.\n```\n"
          ":::{dropdown} Solution 1\n:open:\nThree prose words\n"
          "```python\nassert inside_dropdown\n```\n"
          "and two.\n:::\n")
    # 3 + 6 (note) + "Solution 1" (2) + 3 + 2; options, fences and code left out
    assert pb.prose_words(md) == 3 + 6 + 2 + 3 + 2


def test_longer_fence_holds_a_shorter_one():
    md = "````markdown\n```python\nx = 1\n```\nstill code\n````\nafter\n"
    assert pb.prose_words(md) == 1


def test_display_math_does_not_count():
    md = ("Before the math.\n"
          "$$\n\\begin{aligned}\na &= b + c \\\\\nd &= e\n\\end{aligned}\n$$\n"
          "$$ x = y + z $$\n"
          "```{math}\nq = k + v\n```\n"
          "Inline $x + y$ counts as tokens.\n")
    # inline math stays prose: "$x" and "y$" have letters, "+" does not
    assert pb.prose_words(md) == 3 + 6


def test_html_and_pipe_tables_count_only_their_words():
    html = ("<table>\n<tr><th>model</th><th>bpc</th></tr>\n"
            "<tr><td>vanilla</td><td>1.61</td></tr>\n</table>\n")
    assert pb.prose_words(html) == 4
    pipes = "| model | bpc |\n|---|---:|\n| vanilla | 1.61 |\n"
    assert pb.prose_words(pipes) == 4


# --- code, outputs, figures -----------------------------------------------------------


def test_hidden_and_removed_cells_are_not_visible_code():
    nb = _nb(
        _code("a\nb\nc"),
        _code("1\n2\n3\n4\n5", tags=["hide-input"]),
        _code("1\n2", tags=["remove-input"]),
        _code("1\n2", tags=["remove-cell"]),
        _code("1\n2", tags=["hide-cell"]),
        _code(["x = 1\n", "\n", "y = 2\n"]),  # list source; blank lines count
    )
    b = pb.measure_notebook(nb)
    assert (b.code, b.maxcell) == (6, 3)


def test_printed_lines_count_streams_and_plain_results_only():
    nb = _nb(
        _code("print", outputs=[_stream("one\ntwo\n"), _stream("three")]),
        _code("df", outputs=[_result(text_html="<table>...</table>",
                                     text_plain="   a\n0  1\n1  2")]),
        _code("md", outputs=[_result(text_markdown="| a |", text_plain="<Markdown>")]),
        _code("fig", outputs=[_result(image_png="iVBOR", text_plain="<Figure>")]),
        _code("x", outputs=[_result(text_plain="(1,\n 2)")]),  # plain repr: 2 lines
        _code("p", tags=["hide-output"], outputs=[_stream("a\nb\nc\n")]),
        _code("p", tags=["remove-output"], outputs=[_stream("a\nb\nc\n")]),
        _code("p", tags=["remove-cell"], outputs=[_stream("a\nb\nc\n")]),
        _code("p", tags=["hide-input"], outputs=[_stream("shown\n")]),  # output stays
    )
    assert pb.measure_notebook(nb).output == 3 + 2 + 1


def test_figures_need_caption_and_alt_unless_removed():
    png = _result(image_png="iVBOR", text_plain="<Figure>")
    good = {"mystnb": {"figure": {"caption": "Loss by step.", "name": "fig-1-loss"},
                       "image": {"alt": "A falling curve."}}}
    nb = _nb(
        _code("plot", outputs=[png]),  # no metadata
        _code("plot", outputs=[png], mystnb={"figure": {"caption": "c"}}),  # no alt
        _code("plot", tags=["hide-input"], outputs=[png], **good),
        _code("plot", tags=["remove-output"], outputs=[png]),
        _code("plot", tags=["hide-output"], outputs=[png]),  # still on the page
    )
    assert pb.measure_notebook(nb).nocap == 3


def test_over_names_each_exceeded_budget():
    b = pb.Budget(words=3001, code=150, maxcell=26, output=61, nocap=0)
    assert b.over() == ["words", "maxcell", "output"]
    assert pb.Budget().over() == []


def test_exit_status_follows_the_named_pages(tmp_path, capsys):
    ok, bad = tmp_path / "ok.ipynb", tmp_path / "bad.ipynb"
    ok.write_text(json.dumps(_nb(_md("Short page."), _code("x = 1"))))
    bad.write_text(json.dumps(_nb(_code("\n".join(["x = 1"] * 26)))))
    assert pb.main([str(ok)]) == 0
    assert pb.main([str(ok), str(bad)]) == 1
    assert "maxcell" in capsys.readouterr().out


# --- the converted pages --------------------------------------------------------------


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_converted_page_is_within_budget(page):
    path = ROOT / page
    assert path.is_file(), f"{page} is listed as converted but does not exist"
    b = pb.measure(path)
    assert b.over() == [], f"{page}: {b}"


def _prose(page: str) -> str:
    """The markdown of a page (a notebook's markdown cells)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if page.endswith(".ipynb"):
        cells = json.loads(text)["cells"]
        text = "\n".join(pb._text(c["source"]) for c in cells
                         if c["cell_type"] == "markdown")
    return text


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_converted_page_lists_its_references(page):
    """A converted page that cites lists its own references (filtered to the page; the
    recap's list is the whole book's)."""
    text = _prose(page)
    if "{cite:" not in text:
        return
    assert "{bibliography}" in text, f"{page} cites but lists no references"
    if page != "book/recap.md":
        assert ":filter: docname in docnames" in text, page


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_converted_page_names_no_chapter_by_number(page):
    """Chapter numbers shift when chapters are split or added: name them."""
    assert not re.findall(r"\b[Cc]hapters? \d", _prose(page))
