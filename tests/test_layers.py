"""The architecture's import boundaries, checked by walking every module's imports (ast).

Floors: ``wire`` (bottom) -> ``storage`` -> ``coordinator`` (top); a lower floor never
imports a higher one, and no module takes part in an import cycle (every import counts:
module level, in functions, and under TYPE_CHECKING).

| layer | must never import |
|---|---|
| wire/ | trio, coordinator, storage |
| coordinator/{core,security,share}/, config.py, storage/*records.py | trio time os ... |
| storage/ | coordinator; codec modules also trio |
| coordinator/ outside testing/ (and the CLI) | coordinator.testing (the test double) |
| coordinator/broker/ (the topic store) | coordinator.server (the APIs on top of it) |

And no source module is over ``MAX_MODULE_LINES`` lines: a module that grows past it is
split by what it holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 500


def imported_modules(path: Path) -> set[str]:
    """Top-level and dotted names a module imports (absolute imports only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules_under(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    if base.is_file():
        return [base]
    return sorted(base.rglob("*.py"))


def violations(
    paths: list[Path], forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()
) -> list[str]:
    found = []
    for path in paths:
        for name in imported_modules(path):
            if any(name == a or name.startswith(a + ".") for a in allowed):
                continue
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                found.append(f"{where} imports {name}")
    return found


def test_wire_is_pure() -> None:
    assert violations(modules_under("wire"), ("trio", "coordinator", "storage")) == []


@pytest.mark.parametrize(
    "part",
    [
        ("coordinator", "core"),
        ("coordinator", "security"),
        ("coordinator", "share"),
        ("coordinator", "config.py"),
        ("storage", "records.py"),
        ("storage", "share_records.py"),
        ("storage", "share_group_records.py"),
        ("storage", "topic_partitions.py"),
        ("storage", "config_records.py"),
        ("coordinator", "configs"),
        ("storage", "security_records.py"),
    ],
)
def test_coordinator_core_is_sans_io(part: tuple[str, ...]) -> None:
    paths = modules_under(*part)
    assert paths, f"{'/'.join(part)} has no modules"
    forbidden = ("trio", "time", "random", "os", "socket", "threading", "asyncio", "storage")
    # The core reads storage's record types, never its files.
    allowed = ("storage.records", "storage.share_records", "storage.share_group_records",
               "storage.topic_partitions", "storage.config_records", "storage.security_records")
    assert violations(paths, forbidden, allowed) == []


def test_storage_needs_no_trio_or_coordinator() -> None:
    # Trio only in the async writer; the pipeline runs in Spark's workers.
    codec = [
        p
        for p in modules_under("storage")
        if p.name != "async_log.py" and "pipeline" not in p.relative_to(ROOT).parts
    ]
    assert len(codec) > 10, "storage modules are missing"
    assert violations(codec, ("trio",)) == []
    assert violations(modules_under("storage"), ("coordinator",)) == []


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import trio\nfrom coordinator.core import x\n", encoding="utf-8")
    assert len(violations([bad], ("trio", "coordinator"))) == 2


def test_production_code_does_not_import_the_test_double() -> None:
    # The CLI is where the test double is wired in on request (``serve --control-port``
    # starts its HTTP control API); nothing else reaches it.
    production = [
        p for p in modules_under("coordinator")
        if "testing" not in p.parts and p != ROOT / "coordinator" / "cli.py"
    ]
    assert violations(production, ("coordinator.testing",)) == []


def test_the_topic_store_does_not_import_the_server() -> None:
    # The broker APIs live in the server's route modules; ``coordinator/broker`` is the
    # topic store under them.
    paths = modules_under("coordinator", "broker")
    assert len(paths) > 5, "coordinator/broker has no modules"
    assert violations(paths, ("coordinator.server",)) == []


def too_long(paths: Iterable[Path], limit: int = MAX_MODULE_LINES) -> list[str]:
    """The modules of ``paths`` over ``limit`` lines, with their line counts."""
    found = []
    for path in paths:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            found.append(f"{where}: {lines} lines")
    return found


def test_no_source_module_is_over_the_limit() -> None:
    paths = [p for floor in ("wire", "storage", "coordinator") for p in modules_under(floor)]
    assert len(paths) > 100
    assert too_long(paths) == []


def test_size_checker_sees_a_long_module(tmp_path: Path) -> None:
    long, short = tmp_path / "long.py", tmp_path / "short.py"
    long.write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    short.write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    assert too_long([long, short]) == [f"{long}: {MAX_MODULE_LINES + 1} lines"]


# --------------------------------------------------------------------------- import cycles

FLOORS = ("wire", "storage", "coordinator")


def module_names(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` under ``root``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Which first-party modules each module imports (relative imports resolved; ``from
    pkg import sub`` is an edge to the submodule; a package's own submodules importing their
    parent implicitly do not count)."""

    def known(name: str) -> str | None:
        while name:
            if name in modules:
                return name
            name = name.rpartition(".")[0]
        return None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                edges.update(m for a in node.names if (m := known(a.name)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package
                    for _ in range(node.level - 1):
                        parent = parent.rpartition(".")[0]
                    base = f"{parent}.{base}" if base else parent
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    resolved = target if target in modules else known(base)
                    if resolved:
                        edges.add(resolved)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    graph = import_graph(module_names(ROOT, FLOORS))
    assert len(graph) > 100
    assert cycles(graph) == []


def test_no_floor_imports_a_higher_one() -> None:
    graph = import_graph(module_names(ROOT, FLOORS))
    rank = {floor: i for i, floor in enumerate(FLOORS)}
    upward = [
        f"{name} imports {target}"
        for name, targets in graph.items()
        for target in targets
        if rank[target.split(".")[0]] > rank[name.split(".")[0]]
    ]
    assert upward == []


def test_cycle_checker_sees_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from pkg import b\n", encoding="utf-8")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
        encoding="utf-8",
    )
    (pkg / "c.py").write_text("import pkg.a\n", encoding="utf-8")
    graph = import_graph(module_names(tmp_path, ["pkg"]))
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
