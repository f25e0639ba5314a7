"""Make the repository root and this folder importable when pytest runs uninstalled."""

from __future__ import annotations

import sys
from pathlib import Path

for _path in (Path(__file__).resolve().parents[2], Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
