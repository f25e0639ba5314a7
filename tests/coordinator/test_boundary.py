"""The sans-I/O boundary: coordinator/core (its subfolders too) imports only stdlib (and
RE2), wire.constants, wire.bounded_cache (a dict that empties when full), the consumer
protocol's stdlib reader (wire.consumer_protocol), storage.records, coordinator.config,
itself and the plain types the shared Result vocabulary names for the transaction shard (its
messages and timer keys) and the share shard (its timer key; no trio, time, random, os,
sockets, threads)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "coordinator" / "core"
FORBIDDEN = {"trio", "time", "random", "os", "socket", "threading", "asyncio",
             "selectors", "subprocess", "datetime"}
# uuid is allowed for the UUID type (topic ids); making one up is the runtime's business.
UUID_MAKERS = {"uuid1", "uuid3", "uuid4", "uuid5", "getnode"}
# RE2 (google-re2) matches subscription regexes in linear time, as Kafka's RE2/J does: a pure
# function library, no I/O.
ALLOWED_THIRD_PARTY = {"re2"}
# wire.consumer_protocol is the one reader of the embedded consumer protocol; it imports the
# standard library only (checked below), so the core reads it without a codec library.
# coordinator.share.assignor is the share groups' assignor, held to the same sans-I/O rule
# by tests/test_layers.py.
ALLOWED_FIRST_PARTY = {"storage.records", "coordinator.config", "wire.constants",
                       "wire.bounded_cache", "wire.consumer_protocol",
                       "coordinator.txn.messages", "coordinator.txn.timers",
                       "coordinator.share.timers", "coordinator.share.assignor"}
STDLIB_ONLY_WIRE = CORE.parents[1] / "wire" / "consumer_protocol.py"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_imports_stay_inside_the_boundary() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert any(p.parent.name == "classic" for p in files)
    for path in files:
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN, f"{path.name} imports {name}"
            if name in ALLOWED_FIRST_PARTY:
                continue
            if top == "coordinator":
                assert name.startswith("coordinator.core") or name in ALLOWED_FIRST_PARTY, (
                    f"{path.name} imports {name}")
            else:
                assert (top in sys.stdlib_module_names or top == "__future__"
                        or top in ALLOWED_THIRD_PARTY), (
                    f"{path.name} imports non-stdlib {name}")


def test_core_never_makes_up_uuids() -> None:
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert not (node.value.id == "uuid" and node.attr in UUID_MAKERS), path.name
            if isinstance(node, ast.ImportFrom) and node.module == "uuid":
                assert not {a.name for a in node.names} & UUID_MAKERS, path.name


def test_the_consumer_protocol_reader_is_stdlib_only() -> None:
    names = _imports(STDLIB_ONLY_WIRE)
    assert names
    for name in names:
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or top == "__future__", name
