"""The house rules that keep the package simple to live in: no import cycle (deferred imports inside functions
included), no module over ~400 lines, the folders' arrows point one way (the engine and I/O never name a family nor
anything that reads a build, the family contract imports neither the engine nor a family, families never import
eval), and the ground floor holds only the public face and a few helpers."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "corruptgen"
MAX_LINES = 430


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the package that ``name`` imports anywhere in its body (``from . import x`` counts as ``.x``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names} & modules.keys()
            found |= subs
            if len(subs) < len(node.names):
                found.add(target)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_too_long():
    long = {p.relative_to(PACKAGE).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}  # fmt: skip
    assert not long


def test_corruptions_never_open_files():
    """Family math takes arrays and generators; only loaders named as such (kernels, frost textures) read data."""
    # export.py: a layout writes files; selection.py: Syn2Nat's Algorithm 1 reads the user's category file
    allowed = {"kernelio.py", "_frost.py", "cli.py", "stats.py", "export.py", "selection.py"}
    offenders = []
    for path in (PACKAGE / "families").rglob("*.py"):
        if path.name in allowed:
            continue
        text = path.read_text()
        if "open(" in text.replace("Image.open(", "").replace("fromarray(", ""):
            offenders.append(path.relative_to(PACKAGE).as_posix())
    assert not offenders


def _under(module: str, *packages: str) -> bool:
    return any(module == f"corruptgen.{p}" or module.startswith(f"corruptgen.{p}.") for p in packages)


def _arrows(source: tuple[str, ...], target: tuple[str, ...]) -> dict[str, list[str]]:
    """Modules under the ``source`` folders that import modules under the ``target`` folders, and what they import."""
    graph = _graph()
    found = {m: sorted(d for d in deps if _under(d, *target)) for m, deps in graph.items() if _under(m, *source)}
    return {m: d for m, d in found.items() if d}


def test_the_engine_and_io_never_import_families_eval_hub_gallery_or_export():
    """The build core runs any family through the contract; it never names one, nor anything that reads a build."""
    assert _arrows(("engine", "io"), ("families", "eval", "hub", "gallery", "export")) == {}


def test_the_family_contract_imports_neither_the_engine_nor_a_family():
    """Families and the engine both depend on the contract (``corruptgen.family``), never the other way round."""
    assert _arrows(("family",), ("engine", "families", "eval", "hub", "gallery", "export")) == {}


def test_families_never_import_eval():
    assert _arrows(("families",), ("eval",)) == {}


def test_io_never_imports_the_engine_or_the_contract():
    assert _arrows(("io",), ("engine", "family")) == {}


#: what ``corruptgen/`` itself holds: the public face (api, cli, the command and name registries, errors, the
#: on-the-fly augmentations) and a handful of ground-floor helpers; everything else lives in a folder
GROUND_FLOOR = {"__init__", "__main__", "_version", "_no_update_checks", "api", "cli", "commands", "errors",
                "registry", "augment", "alloc", "lazy", "progress", "seeding", "wording"}  # fmt: skip


def test_the_ground_floor_holds_only_the_public_face_and_a_few_helpers():
    assert {p.stem for p in PACKAGE.glob("*.py")} <= GROUND_FLOOR
