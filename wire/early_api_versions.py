"""ApiVersions without construct: the server's first answers, before the codecs load.

A process start pays for construct's import (20-50 ms) before it could encode anything;
the listener answers ApiVersions during that time from this module (``coordinator/server/
early.py``). It handles only the well-formed case -- a request of a version ``wire``'s
registry serves, its header and body decoded completely with no tagged fields -- and
leaves everything else (``None``) to the full server, which answers it once loaded. The
message layout is ``wire/apis/api_versions.py``'s (header v0 answers, flexible from v3);
``tests/wire/test_early_api_versions.py`` checks every version byte for byte against
``wire.codec``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from wire.constants import ApiKey
from wire.fast_frames import compact_string, no_tags
from wire.registry import lookup
from wire.varint import encode_uvarint

__all__ = ["EarlyApiVersionsRequest", "decode_api_versions_request", "encode_api_versions_response"]

_PREFIX = struct.Struct(">hhi")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_KEY = struct.Struct(">hhh")
_I64 = struct.Struct(">q")
_LEVELS = struct.Struct(">hh")


class EarlyApiVersionsRequest(NamedTuple):
    """The fields of an ApiVersions request that its answer depends on."""

    api_version: int
    correlation_id: int
    client_software_name: str
    client_software_version: str


def decode_api_versions_request(payload: bytes) -> EarlyApiVersionsRequest | None:
    """The request in ``payload`` (a frame without its size prefix) when it is an ApiVersions
    request of a served version that decodes completely without tagged fields; else None."""
    if len(payload) < _PREFIX.size:
        return None
    api_key, version, correlation_id = _PREFIX.unpack_from(payload)
    spec = lookup(ApiKey.API_VERSIONS)
    if api_key != ApiKey.API_VERSIONS or spec is None or not spec.supports(version):
        return None
    try:
        (client_id_size,) = _I16.unpack_from(payload, _PREFIX.size)
        pos = _PREFIX.size + 2
        if client_id_size >= 0:
            end = pos + client_id_size
            if end > len(payload):
                return None
            payload[pos:end].decode("utf-8")
            pos = end
        name = software_version = ""
        if spec.request.is_flexible(version):
            pos = no_tags(payload, pos)  # the header's
            name, pos = compact_string(payload, pos)
            software_version, pos = compact_string(payload, pos)
            pos = no_tags(payload, pos)  # the body's
    except (ValueError, IndexError, struct.error):  # Malformed, UnicodeDecodeError: ValueError
        return None
    if pos != len(payload):
        return None
    return EarlyApiVersionsRequest(version, correlation_id, name, software_version)


def encode_api_versions_response(
    version: int, correlation_id: int, error_code: int, api_keys: Iterable[Mapping[str, int]],
    features: Mapping[str, Any] | None = None,
) -> bytes:
    """A size-prefixed ApiVersions response (header v0) at ``version``; ``features`` are the
    tagged v3+ fields (``supported_features``, ``finalized_features_epoch``,
    ``finalized_features``) as the codec takes them, each omitted at its default."""
    spec = lookup(ApiKey.API_VERSIONS)
    assert spec is not None and spec.supports(version), f"ApiVersions v{version}"
    flexible = spec.response.is_flexible(version)
    keys = list(api_keys)
    out = bytearray(b"\x00\x00\x00\x00")
    out += _I32.pack(correlation_id)
    out += _I16.pack(error_code)
    out += encode_uvarint(len(keys) + 1) if flexible else _I32.pack(len(keys))
    for key in keys:
        out += _KEY.pack(key["api_key"], key["min_version"], key["max_version"])
        if flexible:
            out += b"\x00"
    if version >= 1:
        out += _I32.pack(0)  # throttle_time_ms
    if flexible:
        out += _feature_tags(features or {})
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def _feature_list(entries: Iterable[Mapping[str, Any]], first: str, second: str) -> bytes:
    """A compact array of (name, int16, int16) structs, each with no tagged fields."""
    items = list(entries)
    out = bytearray(encode_uvarint(len(items) + 1))
    for entry in items:
        name = str(entry["name"]).encode()
        out += encode_uvarint(len(name) + 1) + name
        out += _LEVELS.pack(entry[first], entry[second]) + b"\x00"
    return bytes(out)


def _feature_tags(features: Mapping[str, Any]) -> bytes:
    """The response's tagged-field section: tags 0-2 in order, each only when it differs from
    its default (an empty list, epoch -1), as the codec writes them."""
    fields: list[tuple[int, bytes]] = []
    supported = features.get("supported_features") or []
    if supported:
        fields.append((0, _feature_list(supported, "min_version", "max_version")))
    epoch = features.get("finalized_features_epoch", -1)
    if epoch != -1:
        fields.append((1, _I64.pack(epoch)))
    finalized = features.get("finalized_features") or []
    if finalized:
        fields.append((2, _feature_list(finalized, "max_version_level", "min_version_level")))
    out = bytearray(encode_uvarint(len(fields)))
    for tag, data in fields:
        out += encode_uvarint(tag) + encode_uvarint(len(data)) + data
    return bytes(out)
