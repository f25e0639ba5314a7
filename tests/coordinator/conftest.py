"""Make the repository root importable when pytest is run without installing kcoord."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import pytest  # noqa: E402
from harness import Harness  # noqa: E402


@pytest.fixture
def h() -> Harness:
    """A coordinator with GroupCoordinatorTest.scala's configuration and a fake clock at 0."""
    return Harness()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` tests of this directory only run when asked for (``-m slow``)."""
    if config.option.markexpr:
        return
    here = Path(__file__).resolve().parent
    skip = pytest.mark.skip(reason="slow variant: run with -m slow")
    for item in items:
        if "slow" in item.keywords and here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
