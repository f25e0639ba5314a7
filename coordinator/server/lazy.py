"""Importing a submodule without its package's ``__init__`` (startup time).

``coordinator/broker/__init__.py`` imports the topic store, and through it record batches,
partition logs and the transaction state. Validating the broker's config keys and
answering the first ApiVersions need only two small leaf modules (``broker/config.py``,
``server/apis/api_versions.py``), so the CLI loads those by file and leaves the rest to a
worker thread after the listener is up (the issue's budget is
150 ms from process start to the first answered ApiVersions). Once the package is imported
for real, its ``__init__`` finds these modules in ``sys.modules`` and reuses them.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from wire.module_loading import load_spec

__all__ = ["import_leaf"]


def import_leaf(name: str) -> ModuleType:
    """Import ``name`` (``pkg.sub.leaf``) without running ``pkg.sub``'s ``__init__`` when that
    package is not imported yet; a normal import otherwise."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    parent, _, leaf = name.rpartition(".")
    if not parent or parent in sys.modules:
        return importlib.import_module(name)
    grandparent, _, package = parent.rpartition(".")
    search = importlib.import_module(grandparent).__path__ if grandparent else sys.path
    for entry in search:
        path = Path(entry) / package / f"{leaf}.py"
        if path.is_file():
            break
    else:
        return importlib.import_module(name)
    return load_spec(name, importlib.util.spec_from_file_location(name, path))
