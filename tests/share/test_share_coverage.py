"""COVERAGE.md stays honest: every mirrored Kafka test it lists exists under that name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^- \[(x| )\] `(\w+)`(?: -> `([\w.]+)::(\w+)`| -- .+)$")


def _snake(name: str) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return snake if snake.startswith("test_") else "test_" + snake


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_mirrored_kafka_test_exists() -> None:
    text = (HERE / "COVERAGE.md").read_text(encoding="utf-8")
    mirrored = listed = 0
    for line in text.splitlines():
        match = LINE.match(line)
        if not match:
            assert not line.startswith("- ["), line
            continue
        listed += 1
        if match.group(1) == "x":
            mirrored += 1
            kafka_name, file_name, function = match.groups()[1:]
            assert function == _snake(kafka_name), line
            assert function in _functions(HERE / file_name), line
    assert listed == 133 + 12 + 7 + 19 + 36 + 2 + 21
    summary = re.findall(r"\*\*(\d+) of (\d+)\*\*", text)
    assert sum(int(done) for done, _ in summary) == mirrored
