"""COVERAGE.md stays honest: every mirrored Kafka test it lists exists under that name."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^- \[(x| )\] `(\w+)`(?: -> `([\w.]+)::(\w+)`| -- .+)$")


def _snake(name: str) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return snake if snake.startswith("test_") else "test_" + snake


@functools.cache
def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_mirrored_kafka_test_exists() -> None:
    text = (HERE / "COVERAGE.md").read_text()
    scala, java = text.split("## Java-only classic tests")
    counts = {}
    for label, section in (("scala", scala), ("java", java)):
        done = total = 0
        for line in section.splitlines():
            match = LINE.match(line)
            if not match:
                assert not line.startswith("- ["), line
                continue
            total += 1
            if match.group(1) == "x":
                done += 1
                kafka_name, file_name, function = match.group(2), match.group(3), match.group(4)
                assert function == _snake(kafka_name)
                assert function in _functions(HERE / file_name), (file_name, function)
        counts[label] = (done, total)
    assert counts["scala"] == (162, 163)
    assert counts["java"] == (29, 31)
    assert "**162 of 163**" in text and "**29 of 31**" in text
