"""The package's import structure: no cycles (function-level imports count too), one-way layers."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "wikireact"

LAYERS: list[tuple[str, ...]] = [
    ("errors", "_paths", "_extras", "_json_text", "protocols", "html_page"),
    ("state", "context"),
    ("storage",),
    ("prompting", "wiki"),
    ("evidence",),
    ("models",),
    ("episode",),
    ("nodes",),
    ("graph", "agents"),
    ("fork", "tool", "history", "history_page"),
    ("eval",),
    ("cli", "__main__"),
]
"""The packages (and top-level modules), lower layers first; a module may import its own layer or
lower ones, never a higher one. The folder tree draws the same picture (docs/developing.md)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every wikireact module imported anywhere in the file (function bodies included)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("wikireact")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("wikireact"):
                found.add(target)
                found |= {f"{target}.{a.name}" for a in node.names}
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges[name] = {m for m in imports_of(path) if m in modules and m != name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def layer_of(module: str) -> int | None:
    top = module.split(".")[1] if "." in module else ""
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    return None


def test_no_import_cycles() -> None:
    edges = {m: {d for d in deps if not _is_package_init(m, d)} for m, deps in graph().items()}
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def _is_package_init(importer: str, imported: str) -> bool:
    """A package's __init__ re-exporting its own submodules is not a cycle of concern."""
    return importer != "wikireact" and imported.startswith(importer + ".")


@pytest.mark.parametrize("module", sorted(graph()))
def test_layers_only_import_downward(module: str) -> None:
    mine = layer_of(module)
    if module == "wikireact":
        return  # the package root re-exports the public API
    assert mine is not None, f"{module} belongs to no layer: add it to LAYERS"
    upward = sorted(
        d for d in graph()[module] if (layer := layer_of(d)) is not None and layer > mine
    )
    assert not upward, f"{module} imports a higher layer: {upward}"


def test_the_test_double_is_not_imported_by_the_core() -> None:
    for module, deps in graph().items():
        if module.startswith(("wikireact.nodes", "wikireact.eval", "wikireact.graph")):
            assert "wikireact.models.scripted" not in deps, module


def test_the_top_of_the_package_holds_at_most_14_modules() -> None:
    """The public face and the design card's agent; everything else lives in a concern package."""
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 14, modules


def test_every_exception_class_lives_in_the_errors_module() -> None:
    """One home for errors: a caller finds every class (and its place in the hierarchy) there."""
    elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")).endswith(
                    ("Error", "Exception")
                )
                for base in node.bases
            ):
                elsewhere.append(f"{module_name(path)}.{node.name}")
    assert not elsewhere, elsewhere
