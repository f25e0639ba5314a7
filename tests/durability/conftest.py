"""Durability tests: the real storage log under the coordinator, and a real ``kcoord serve``
killed with SIGKILL. Makes the repository root and the coordinator test harness importable."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
for _path in (str(_TESTS.parent), str(_TESTS / "coordinator")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

# kafka-python 3.0.12 loads its JSON schemas with importlib.resources' legacy API (deprecated
# in 3.11; the suite turns warnings into errors): import it once with that warning silenced.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka  # noqa: F401
