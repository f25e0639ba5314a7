"""kcoord's wire layer: Kafka's binary protocol, decoded and encoded with construct.

Pure: no I/O, no clocks. ``FrameReader`` turns a byte stream into frames,
``decode_request`` / ``encode_response`` turn frames into messages and back.

Importing ``wire`` builds and imports no codec: construct and ``wire.codec`` load on the
first use of a codec name (PEP 562), and each API's module on its first lookup
(``wire.registry``), so the ApiVersions table is there without them (startup time).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wire.constants import ApiKey, ErrorCode
from wire.errors import CorruptFrame, FrameTooLarge, UnsupportedVersion
from wire.framing import DEFAULT_MAX_FRAME_BYTES, NEED_DATA, FrameReader, frame
from wire.registry import VERSION_TABLE, ApiSpec, ApiVersionRange, all_apis, lookup

if TYPE_CHECKING:
    from wire.codec import (
        DecodedRequest,
        api_versions_keys,
        decode_request,
        decode_response,
        encode_request,
        encode_response,
        encode_unsupported_api_versions,
        peek_request_header,
    )

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "NEED_DATA",
    "VERSION_TABLE",
    "ApiKey",
    "ApiSpec",
    "ApiVersionRange",
    "CorruptFrame",
    "DecodedRequest",
    "ErrorCode",
    "FrameReader",
    "FrameTooLarge",
    "UnsupportedVersion",
    "all_apis",
    "api_versions_keys",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "encode_unsupported_api_versions",
    "frame",
    "lookup",
    "peek_request_header",
]

#: The names of ``__all__`` not bound above: ``wire.codec``'s, imported on first use.
_CODEC_NAMES = frozenset(__all__) - frozenset(globals())


def __getattr__(name: str) -> Any:
    """The codec's names, imported on first use."""
    if name in _CODEC_NAMES:
        value = getattr(importlib.import_module("wire.codec"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'wire' has no attribute {name!r}")
