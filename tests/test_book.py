"""Structural checks of the book: config, table of contents, and every chapter
notebook.

These tests read files only (no kernel, no torch); nbval runs the notebooks
themselves.
Per-notebook tests are parametrized over the notebooks on disk; one test ties that set
to the chapters listed in _toc.yml, so a missing or unlisted chapter fails loudly.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))

# The repository URL inside a Colab install cell:
#     %pip install ... "txl_mini @ git+<URL>"
INSTALL_URL = re.compile(r"""txl_mini\s*@\s*git\+(?P<url>https://[^\s"'@#]+)""")
COLAB_GUARD = re.compile(
    r"""^if\s+["']google\.colab["']\s+in\s+sys\.modules\s*:""", re.M)


def _toc_files(node) -> list[str]:
    """Every `file:` entry of a jb-book toc, in reading order (root first)."""
    found = []
    if isinstance(node, dict):
        if "file" in node:
            found.append(node["file"])
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []) or []:
                found.extend(_toc_files(child))
    return found


TOC_FILES = [TOC["root"], *_toc_files(TOC)]


def _resolve(entry: str) -> list[Path]:
    """Files on disk that a toc entry (given without suffix) may refer to."""
    base = ROOT / entry
    if base.suffix:
        return [base] if base.exists() else []
    candidates = (base.with_suffix(s) for s in (".md", ".ipynb"))
    return [p for p in candidates if p.exists()]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _code_cells(path: Path) -> list[dict]:
    return [c for c in _cells(path) if c["cell_type"] == "code"]


nb_param = pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])


# --- config and table of contents -----------------------------------------------------


def test_config_never_executes_notebooks():
    # The site must show exactly the committed outputs.
    assert CONFIG["execute"]["execute_notebooks"] == "off"


def test_config_has_colab_launch_button_and_repository():
    assert (CONFIG["launch_buttons"]["colab_url"]
            == "https://colab.research.google.com")
    assert CONFIG["repository"]["url"].startswith("https://github.com/")
    assert CONFIG["repository"]["branch"] == "main"
    for bib in CONFIG["bibtex_bibfiles"]:
        assert (ROOT / bib).is_file(), bib


def test_every_toc_entry_exists():
    missing = [entry for entry in TOC_FILES if len(_resolve(entry)) != 1]
    assert not missing, (
        f"_toc.yml lists files that do not exist (or exist twice): {missing}")


MARKDOWN_PAGES = {"book/intro", "book/recap"}  # pages without code to run


def test_notebooks_on_disk_are_exactly_the_toc_chapters():
    for page in MARKDOWN_PAGES:
        assert page in TOC_FILES and (ROOT / f"{page}.md").is_file(), page
    in_toc = set(TOC_FILES) - MARKDOWN_PAGES
    on_disk = {p.relative_to(ROOT).with_suffix("").as_posix() for p in NOTEBOOKS}
    assert on_disk == in_toc, (
        f"only on disk: {sorted(on_disk - in_toc)}; "
        f"only in _toc.yml: {sorted(in_toc - on_disk)}"
    )


# A {bibliography} directive and its option lines (`:key: value`)
BIBLIOGRAPHY = re.compile(
    r"(?:`{3,}|:{3,})\{bibliography\}[^\n]*\n((?:[ \t]*:[\w-]+:.*\n)*)")
PAGE_FILTER = ":filter: docname in docnames"
BOOK_LIST = "book/recap"  # the one list of every work the book cites


def _page_markdown(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = _cells(path)
        return "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


def test_bibliographies_per_page_and_one_for_the_book():
    """Each page lists the works it cites (`:filter: docname in docnames`), at most
    once; the recap's unfiltered list is the only one with every work the book cites."""
    unfiltered = []
    for path in [*BOOK.glob("*.md"), *NOTEBOOKS]:
        page = path.relative_to(ROOT).with_suffix("").as_posix()
        found = BIBLIOGRAPHY.findall(_page_markdown(path) + "\n")
        assert len(found) <= 1, f"{page}: {len(found)} bibliographies"
        for options in found:
            if PAGE_FILTER not in options:
                unfiltered.append(page)
    assert unfiltered == [BOOK_LIST]


# --- every chapter notebook -----------------------------------------------------------


@nb_param
def test_first_code_cell_installs_from_the_book_repository_only_in_colab(nb):
    code = _code_cells(nb)
    assert code, "the notebook has no code cells"
    first = _source(code[0])
    assert COLAB_GUARD.search(first), (
        "first code cell must be guarded by `if \"google.colab\" in sys.modules:`")
    assert re.search(r"^import sys\b", first, re.M), "the guard needs `import sys`"
    urls = INSTALL_URL.findall(first)
    assert urls, "first code cell must install `txl_mini @ git+<repository url>`"
    assert set(urls) == {CONFIG["repository"]["url"]}
    # The install must sit inside the guard: every line that installs is indented
    # under it.
    guard_at = COLAB_GUARD.search(first).end()
    for line in first.splitlines():
        if "pip install" in line:
            assert line.startswith((" ", "\t")) and first.index(line) > guard_at, line


@nb_param
def test_committed_with_outputs(nb):
    not_run = [i for i, c in enumerate(_code_cells(nb))
               if _source(c).strip() and c.get("execution_count") is None]
    assert not not_run, (
        f"code cells without an execution_count (not executed?): {not_run}")
    counts = [c["execution_count"] for c in _code_cells(nb)
              if c.get("execution_count") is not None]
    assert counts == sorted(counts), (
        "cells were executed out of order; run scripts/execute_notebooks.sh")


@nb_param
def test_has_a_plot(nb):
    pngs = [o for c in _code_cells(nb) for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]
    assert pngs, "every chapter shows at least one plot (an image/png output)"


@nb_param
def test_has_what_we_measured_summary(nb):
    md = [_source(c) for c in _cells(nb) if c["cell_type"] == "markdown"]
    assert any("what we measured" in s.lower() for s in md)


@nb_param
def test_does_not_copy_package_code(nb):
    # The package is canonical: notebooks import it; no path hacks, no %run of scripts.
    for i, cell in enumerate(_cells(nb)):
        src = _source(cell)
        if cell["cell_type"] != "code":
            continue
        assert not re.search(r"\bsys\.path\b", src), f"cell {i} touches sys.path"
        assert not re.search(r"^\s*%run\b", src, re.M), f"cell {i} uses %run"


@nb_param
def test_no_error_outputs(nb):
    errors = [i for i, c in enumerate(_code_cells(nb)) for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, f"committed error outputs in cells {errors}"


# --- the README's commands are the ones CI runs ---------------------------------------

SETUP = ("python3 -m venv .venv && . .venv/bin/activate"
         " && pip install -r requirements.txt -e .")


def _marked_command(text: str, name: str) -> str:
    """The one command line in the fenced block after `<!-- ci:NAME ... -->`."""
    m = re.search(rf"^<!--\s*ci:{name}\b[^>]*-->\s*\n```[a-z]*\n(.*?)^```", text,
                  re.S | re.M)
    assert m, f"README.md has no fenced block after <!-- ci:{name} -->"
    lines = [ln.strip() for ln in m.group(1).splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(lines) == 1, (
        f"the ci:{name} block must hold exactly one command line: {lines}")
    return lines[0]


_README = (ROOT / "README.md").read_text(encoding="utf-8")
README_COMMANDS = {name: _marked_command(_README, name) for name in ("build", "test")}


def test_readme_has_the_two_commands():
    assert README_COMMANDS["build"] == (
        f"{SETUP} && jupyter-book build -W --keep-going .")
    # the test run checks the notebooks on "another CPU": PyTorch's generic
    # kernels (README)
    assert README_COMMANDS["test"] == (
        f"{SETUP} && ruff check . && ATEN_CPU_CAPABILITY=default pytest -n 2 "
        "--dist loadscope")
    for cmd in README_COMMANDS.values():
        shlex.split(cmd)  # well-formed shell words


def test_the_cpu_index_hint_comes_before_both_commands():
    """A reader on Linux who runs the first command they see must have read the CPU
    wheel hint first: without it pip pulls the CUDA torch (gigabytes)."""
    hint = _README.find("PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu")
    first = min(_README.find(f"<!-- ci:{name}") for name in ("build", "test"))
    assert 0 <= hint < first


def test_ci_runs_exactly_the_readme_commands():
    # .ci/run reads the commands from README.md itself; ask it what it would run.
    out = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--print-commands"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()
    assert out == [README_COMMANDS["test"], README_COMMANDS["build"]]


@nb_param
def test_colab_cell_fetches_every_checkpoint_the_notebook_loads(nb):
    # Colab installs only the package; files under book/checkpoints must be fetched by
    # the notebook's first cell, from the book's repository, or the load fails there.
    code = _code_cells(nb)
    first, rest = _source(code[0]), "\n".join(_source(c) for c in code[1:])
    names = sorted(set(re.findall(r"checkpoints/(\w+\.pt)", rest)))
    fetched = _colab_downloads(first) if names else []
    for name in names:
        assert (BOOK / "checkpoints" / name).is_file(), name
        url = CONFIG["repository"]["url"] + "/raw/main/book/checkpoints/" + name
        assert url in fetched, f"the Colab cell does not fetch checkpoints/{name}"


def _colab_downloads(cell_source: str) -> list[str]:
    """Run a Colab cell as Colab would (google.colab present, %pip a no-op) with
    downloads recorded instead of made: the URLs it fetches."""
    import sys
    import types
    from unittest import mock

    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(cell_source)
    fetched = []
    shell = types.SimpleNamespace(run_line_magic=lambda *a: None)
    with mock.patch.dict(sys.modules, {"google.colab": types.ModuleType("colab")}), \
            mock.patch("urllib.request.urlretrieve",
                       lambda url, dest: fetched.append(url)), \
            mock.patch("os.makedirs"):
        exec(python, {"get_ipython": lambda: shell})
    return fetched


@nb_param
def test_colab_cell_fetches_the_zoo_groups_the_notebook_loads(nb):
    # The zoo's file names are mostly built in loops (zoo/ch4_{variant}_s{seed}.pt), so
    # the first cell is run with downloads recorded: it must fetch every file of every
    # group whose names the notebook builds, and every file it names in full
    # (zoo/ch6_xl_s0.pt), from the book's repository.
    code = _code_cells(nb)
    rest = "\n".join(_source(c) for c in code[1:])
    groups = sorted(set(re.findall(r"zoo/(ch\d+)_[^\"'\n]*\{", rest)))
    named = sorted(set(re.findall(r"zoo/(ch\d+_\w+_s\d+\.pt)", rest)))
    fetched = _colab_downloads(_source(code[0])) if groups or named else []
    base = CONFIG["repository"]["url"] + "/raw/main/book/zoo/"
    for group in groups:
        files = sorted(p.name for p in (BOOK / "zoo").glob(f"{group}_*.pt"))
        assert files, f"no zoo files for {group}"
        assert sorted(u[len(base):] for u in fetched
                      if u.startswith(base + group + "_")) == files
    for name in named:
        assert (BOOK / "zoo" / name).is_file(), name
        assert base + name in fetched, f"the Colab cell does not fetch zoo/{name}"
