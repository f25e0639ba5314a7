"""Running one module of a package without the package's ``__init__`` (startup time and
memory: see ``wire.checksum``)."""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from importlib.util import module_from_spec
from types import ModuleType

__all__ = ["load_spec"]


def load_spec(name: str, spec: ModuleSpec | None) -> ModuleType:
    """The module ``name`` run from ``spec`` and entered in ``sys.modules`` (left out again
    if it fails), so that a later ordinary import reuses it; the ordinary import when there
    is no usable spec."""
    if spec is None or spec.loader is None:
        return importlib.import_module(name)
    module = module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
