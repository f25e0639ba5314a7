"""Where the pipeline reads and writes: local paths and filesystem URIs (no Spark needed).

An input or ``--output`` is either a local path (``/data/a``, ``data/a``), read by the
``kcoord-log`` Data Source with plain ``open()`` and written as now, or a URI
(``file:///data/a``, ``hdfs://nn:8020/kcoord``, ``s3a://bucket/kcoord``,
``abfs://container@account.dfs.core.windows.net/kcoord``), which goes through Spark's
Hadoop filesystems (:mod:`storage.pipeline.hadoop_fs`), so whatever filesystem the
cluster is configured for works.

A URI is ``scheme:`` followed by ``/`` (``scheme://authority/path`` or ``scheme:/path``),
the scheme being a letter then letters, digits, ``+``, ``-`` or ``.`` (RFC 3986), at least
two characters (``C:/x`` is taken for a drive letter); anything else is a local
path (``a:b`` is a file name).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["Location", "is_uri", "location", "scheme_of"]

_URI_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/")


def scheme_of(text: str) -> str | None:
    """The URI scheme of ``text`` in lower case (``hdfs``), or None for a local path."""
    m = _URI_RE.match(text.strip())
    return m.group(1).lower() if m else None


def is_uri(text: str) -> bool:
    """Whether ``text`` names a location through a filesystem URI, not a local path."""
    return scheme_of(text) is not None


@dataclass(frozen=True, slots=True)
class Location:
    """An input or output: ``text`` normalised (a local path made absolute; a URI without
    trailing slashes, its scheme in lower case) and whether it is a URI."""

    text: str
    uri: bool

    @property
    def scheme(self) -> str | None:
        return scheme_of(self.text)

    def join(self, name: str) -> str:
        """The location of ``name`` inside this one."""
        if not self.uri:
            return os.path.join(self.text, name)
        return f"{self.text.rstrip('/')}/{name}"

    def __str__(self) -> str:
        return self.text


def location(text: str) -> Location:
    """``text`` as a :class:`Location`. Raises ValueError for an empty text and for a URI
    with nothing after its scheme's slashes."""
    value = text.strip()
    if not value:
        raise ValueError("an empty path")
    scheme = scheme_of(value)
    if scheme is None:
        return Location(os.path.abspath(value), uri=False)
    rest = value[len(scheme) + 1 :]
    if not rest.strip("/"):
        raise ValueError(f"{text!r} names no location after {scheme}:")
    if rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        path = "/" + path.rstrip("/") if path.strip("/") else ""
        if not authority and not path:
            raise ValueError(f"{text!r} names no location after {scheme}://")
        return Location(f"{scheme}://{authority}{path}", uri=True)
    return Location(f"{scheme}:/{rest.strip('/')}", uri=True)
