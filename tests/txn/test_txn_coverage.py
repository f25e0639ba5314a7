"""COVERAGE.md stays honest: every mirrored Kafka test it lists exists under that name,
and the summary counts match the lines."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^- \[(x| )\] `(\w+)`(?: -> `([\w.]+)::(\w+)`| -- .+)$")
SECTION = re.compile(r"^## (\w+Test)$")
SUMMARY = re.compile(r"^\| (\w+Test) \| \*\*(\d+) of (\d+)\*\* \|$")


def _snake(name: str) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return snake if snake.startswith("test_") else "test_" + snake


@functools.cache
def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_mirrored_kafka_test_exists() -> None:
    text = (HERE / "COVERAGE.md").read_text()
    counts: dict[str, list[int]] = {}
    claimed: dict[str, tuple[int, int]] = {}
    section = None
    for line in text.splitlines():
        if summary := SUMMARY.match(line):
            claimed[summary.group(1)] = (int(summary.group(2)), int(summary.group(3)))
        elif heading := SECTION.match(line):
            section = heading.group(1)
            counts[section] = [0, 0]
        elif line.startswith("- ["):
            match = LINE.match(line)
            assert match and section, line
            counts[section][1] += 1
            if match.group(1) == "x":
                counts[section][0] += 1
                kafka_name, file_name, function = match.groups()[1:]
                assert function == _snake(kafka_name), line
                assert function in _functions(HERE / file_name), (file_name, function)
    assert claimed == {name: (done, total) for name, (done, total) in counts.items()}
    assert len(claimed) == 6
