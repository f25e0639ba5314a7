"""coordinator/core/consumer's pure algorithms (the assignors and reconciliation, re-exported by
the package root) stay pure: stdlib only (no I/O, clock, randomness or uuid), no import of the
rest of coordinator.core. The protocol modules beside them (group,
heartbeat, records, ...) are held to the core's sans-I/O rule by tests/test_layers.py."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "coordinator" / "core" / "consumer"
PURE = {"__init__", "range_assignor", "reconciliation", "spec", "uniform",
        "uniform_heterogeneous"}
FORBIDDEN = {"trio", "time", "random", "os", "socket", "threading", "asyncio", "selectors",
             "subprocess", "datetime", "uuid"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            if node.module:
                names.append(node.module)
    return names


def test_consumer_package_imports_only_stdlib_and_itself() -> None:
    files = sorted(p for p in PACKAGE.glob("*.py") if p.stem in PURE)
    assert len(files) == len(PURE)
    for path in files:
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN, f"{path.name} imports {name}"
            if top == "coordinator":
                assert name.startswith("coordinator.core.consumer"), f"{path.name} imports {name}"
            else:
                assert top in sys.stdlib_module_names or top == "__future__", (
                    f"{path.name} imports {name}")
