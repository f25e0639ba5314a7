"""CRC-32C (Castagnoli): the checksum of Kafka's record batches and of kcoord's log entries.

``crc32c`` is the ``crc32c`` package's C function, with its extension module loaded by itself
(``crc32c._crc32c``). The package's ``__init__`` looks its own version up with
``importlib.metadata`` (which imports email, zipfile, csv, calendar ...) and imports its
command line (argparse): about 20 ms of CPU and 1.5 MiB of a server's memory that the
checksum does not need. A later ``import crc32c`` finds the extension in ``sys.modules`` and
reuses it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Protocol

from wire.module_loading import load_spec

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
    return load_spec(_EXTENSION, importlib.machinery.PathFinder.find_spec(_EXTENSION, locations))


#: ``crc32c(data, value=0)``: the CRC-32C of a bytes-like ``data``, continuing from ``value``.
crc32c: _Checksum = _extension().crc32c
