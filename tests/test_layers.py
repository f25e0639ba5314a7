"""The architecture's import boundaries, checked by walking every module's imports (ast).

| layer | must never import |
|---|---|
| wire/ | trio, coordinator, storage |
| coordinator/core/, config.py, storage/records.py | trio, time, random, os, socket, threads |
| storage/ | coordinator; codec modules also trio |
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
    "part", [("coordinator", "core"), ("coordinator", "config.py"), ("storage", "records.py")]
)
def test_coordinator_core_is_sans_io(part: tuple[str, ...]) -> None:
    paths = modules_under(*part)
    assert paths, f"{'/'.join(part)} has no modules"
    forbidden = ("trio", "time", "random", "os", "socket", "threading", "asyncio", "storage")
    # The core reads storage's record types, never its files.
    assert violations(paths, forbidden, ("storage.records",)) == []


def test_storage_codec_needs_no_trio_or_coordinator_internals() -> None:
    codec = [
        p
        for p in modules_under("storage")
        if p.name in {"segment.py", "record_codec.py", "schemas.py", "replay.py", "dump.py"}
    ]
    assert codec, "storage codec modules are missing"
    assert violations(codec, ("trio",)) == []
    assert violations(modules_under("storage"), ("coordinator",)) == []


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import trio\nfrom coordinator.core import x\n", encoding="utf-8")
    assert len(violations([bad], ("trio", "coordinator"))) == 2
