"""Make the repository root, this folder and the server tests' raw client importable when
pytest runs uninstalled."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parents[1], _HERE, _HERE.parent / "server"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
