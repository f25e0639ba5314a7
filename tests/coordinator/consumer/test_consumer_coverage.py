"""COVERAGE.md stays honest: every mirrored Kafka test it lists exists under that name, and
the summary's counts match the lines."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^- \[(x| )\] `(\w+)`(?: -> `([\w.]+)::(\w+)`| -- .+)$")
SECTION = re.compile(r"^## (\w+)")
# Kafka test class -> (mirrored, listed), as the summary states them.
EXPECTED = {
    "CurrentAssignmentBuilderTest": (21, 21),
    "UniformHomogeneousAssignmentBuilderTest": (12, 12),
    "UniformHeterogeneousAssignmentBuilderTest": (11, 11),
    "CommonAssignorTests": (2, 2),
    "RangeAssignorTest": (13, 13),
    "ConsumerGroupTest": (31, 34),
    "GroupMetadataManagerTest": (96, 107),
    "OffsetMetadataManagerTest": (14, 14),
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.cache
def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_mirrored_kafka_test_exists() -> None:
    text = (HERE / "COVERAGE.md").read_text()
    counts: dict[str, list[int]] = {}
    section = None
    for line in text.splitlines():
        heading = SECTION.match(line)
        if heading:
            section = heading.group(1)
            continue
        match = LINE.match(line)
        if not match:
            assert not line.startswith("- ["), line
            continue
        assert section is not None
        done_total = counts.setdefault(section, [0, 0])
        done_total[1] += 1
        if match.group(1) == "x":
            done_total[0] += 1
            kafka_name, file_name, function = match.groups()[1:]
            assert function == _snake(kafka_name), (kafka_name, function)
            assert function in _functions(HERE / file_name), (file_name, function)
    assert {name: tuple(pair) for name, pair in counts.items()} == EXPECTED
    for name, (done, total) in EXPECTED.items():
        if name != "CommonAssignorTests":
            assert f"{name}: **{done} of {total}**" in text, name
