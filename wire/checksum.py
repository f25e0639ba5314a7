"""CRC-32C (Castagnoli): the checksum of Kafka's record batches and of kcoord's log entries.

``crc32c`` is the ``crc32c`` package's C function, with its extension module loaded by itself
(``crc32c._crc32c``). The package's ``__init__`` looks its own version up with
``importlib.metadata`` (which imports email, zipfile, csv, calendar ...) and imports its
command line (argparse): about 20 ms of CPU and 1.5 MiB of a server's memory that the
checksum does not need. A later ``import crc32c`` finds the extension in ``sys.modules`` and
reuses it. Measured against issue 33's measure (the extension is loaded before the first
Metadata: the topic store's control batches need it): ``import wire`` then this module
costs 1 M instructions more than ``import wire``, ``import crc32c`` 63 M more (callgrind,
with trio already imported), about 6 % of the instructions until that first Metadata.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Protocol

__all__ = ["crc32c"]

_EXTENSION = "crc32c._crc32c"


class _Checksum(Protocol):
    def __call__(self, data: bytes | bytearray | memoryview, value: int = 0, /) -> int: ...


def _extension() -> ModuleType:
    """``crc32c._crc32c`` without its package's ``__init__`` (ImportError when the
    ``crc32c`` package is not installed)."""
    module = sys.modules.get(_EXTENSION)
    if module is not None:
        return module
    package = importlib.util.find_spec("crc32c")
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'crc32c'", name="crc32c")
    locations = list(package.submodule_search_locations)
    spec = importlib.machinery.PathFinder.find_spec(_EXTENSION, locations)
    if spec is None or spec.loader is None:
        return importlib.import_module(_EXTENSION)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_EXTENSION] = module  # a later ``import crc32c`` reuses it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_EXTENSION]
        raise
    return module


#: ``crc32c(data, value=0)``: the CRC-32C of a bytes-like ``data``, continuing from ``value``.
crc32c: _Checksum = _extension().crc32c
