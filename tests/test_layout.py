"""The package's shape: library apart from the command lines, no import circles, small
modules. Read from the source with `ast`; nothing is imported or run."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "txl_mini"
MAX_LINES = 250
DATA_MODULES = {"txl_mini.corpus_words"}  # word lists: data, not code to read


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The txl_mini modules (and a few stdlib/torch names) that `name` imports."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: climb from this module's package
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from . import x`
    return found


def chapter_modules() -> set[str]:
    found = set()
    for nb in (ROOT / "book").glob("*.ipynb"):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                src = "".join(cell["source"])
                found |= set(re.findall(r"^\s*from (txl_mini[\w.]*) import", src, re.M))
                found |= set(re.findall(r"^\s*import (txl_mini[\w.]*)", src, re.M))
    return found


def internal_graph() -> dict[str, set[str]]:
    return {m: {i for i in imports_of(m) if i in MODULES and i != m} for m in MODULES}


def closure(start: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), list(start)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += graph.get(m, ())
    return seen


def test_no_module_a_chapter_imports_holds_a_command_line():
    graph = internal_graph()
    used = closure(chapter_modules() & set(MODULES), graph)
    assert "txl_mini.model" in used and "txl_mini.train" in used
    for m in sorted(used):
        cli = ("argparse", "torch.distributed")
        bad = {i for i in imports_of(m) if i in cli or i.startswith("txl_mini.cli")}
        assert not bad, f"{m}, which a chapter imports (or what it imports), uses {bad}"


def test_the_library_never_imports_the_command_lines():
    for m in MODULES:
        if not m.startswith("txl_mini.cli") and m != "txl_mini.__main__":
            assert not any(i.startswith("txl_mini.cli") for i in imports_of(m)), m


def test_no_import_circle():
    graph = internal_graph()
    # a package's __init__ importing its own modules is not a circle of code
    graph = {m: {i for i in deps if not m.startswith(i + ".")}
             for m, deps in graph.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(m, path):
        state[m] = 1
        for d in sorted(graph[m]):
            assert state.get(d) != 1, "import circle: " + " -> ".join(path + [m, d])
            if d not in state:
                visit(d, path + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_every_module_stays_small():
    for m, path in MODULES.items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert m in DATA_MODULES or n <= MAX_LINES, f"{m} has {n} lines"


def chapters_importing() -> dict[str, set[str]]:
    """module file -> NN of each book/NN_*.ipynb whose code names txl_mini.<module>."""
    found: dict[str, set[str]] = {}
    for nb in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        for mod in set(re.findall(r"\btxl_mini\.(\w+)", src)):
            found.setdefault(f"{mod}.py", set()).add(nb.name[:2])
    return found


def test_the_chapter_map_in_init_is_what_the_notebooks_import():
    """txl_mini/__init__.py lists per module the chapters that import it; both ways."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text()))
    listed = {m.group(1): set(m.group(2).split())
              for m in re.finditer(r"^\s+(\w+\.py)\s.*?\s((?:\d\d ?)+)$", doc, re.M)}
    assert len(listed) >= 10, listed  # the map parsed: one row per module with chapters
    assert listed == chapters_importing()
