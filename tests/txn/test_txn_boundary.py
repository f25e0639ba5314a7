"""coordinator/txn stays pure: the standard library, wire.constants, storage's record types,
the shared Result vocabulary of the coordinator shards (coordinator.core.result, the
pending-writes overlay its Effects take, the log-append error mapping), the config keys'
definitions (sans-I/O, tests/test_layers.py) and itself only -- no trio, clock, randomness,
files or sockets."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

TXN = Path(__file__).resolve().parents[2] / "coordinator" / "txn"
FORBIDDEN = {
    "trio",
    "time",
    "random",
    "os",
    "socket",
    "threading",
    "asyncio",
    "selectors",
    "subprocess",
    "datetime",
    "uuid",
    "io",
    "pathlib",
}


_ALLOWED = {
    "wire.constants", "storage.records", "coordinator.core.result", "coordinator.core.store",
    "coordinator.core.append_errors", "coordinator.configs.broker_keys",
    "coordinator.configs.config_key",
}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_txn_imports_stay_inside_the_boundary() -> None:
    files = sorted(TXN.glob("*.py"))
    assert len(files) >= 10
    for path in files:
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN, f"{path.name} imports {name}"
            if top in ("coordinator", "wire", "storage"):
                assert name in _ALLOWED or name.startswith("coordinator.txn"), (
                    f"{path.name} imports {name}"
                )
            else:
                assert top in sys.stdlib_module_names or top == "__future__", (
                    f"{path.name} imports non-stdlib {name}"
                )
