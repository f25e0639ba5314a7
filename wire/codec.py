"""Decoding and encoding whole Kafka messages: header + body, both directions.

The server decodes requests and encodes responses; tests and benchmarks play the client
with ``encode_request`` / ``decode_response``. Every decoding failure surfaces as
:class:`wire.CorruptFrame` (or its subclass :class:`wire.UnsupportedVersion`), carrying the
api key, version and correlation id when they could be read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from construct import Container

from wire.constants import ApiKey, ErrorCode
from wire.errors import CorruptFrame, UnsupportedVersion
from wire.framing import frame
from wire.header import (
    REQUEST_HEADER,
    RESPONSE_HEADER,
    request_header_version,
    response_header_version,
)
from wire.registry import VERSION_TABLE, ApiSpec, lookup
from wire.schema import Message, message_struct

__all__ = [
    "DecodedRequest",
    "api_versions_keys",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "encode_unsupported_api_versions",
    "peek_request_header",
]

_PREFIX = struct.Struct(">hhi")


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    """A decoded request: its header fields, its body, and the API it belongs to."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Container
    spec: ApiSpec


def _parse(message: Message, version: int, io: BytesIO) -> Container:
    compiled = message_struct(message, version)
    return compiled.parsefunc(io, None)


def _build(message: Message, version: int, body: Any, io: BytesIO) -> None:
    compiled = message_struct(message, version)
    compiled.buildfunc(body, io, None)


def peek_request_header(payload: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) from the fixed start of any request header."""
    if len(payload) < _PREFIX.size:
        raise CorruptFrame(f"request of {len(payload)} bytes is shorter than a header")
    api_key, api_version, correlation_id = _PREFIX.unpack_from(payload)
    return int(api_key), int(api_version), int(correlation_id)


def decode_request(payload: bytes) -> DecodedRequest:
    """Decode a request frame's payload (the bytes after the size prefix)."""
    api_key, api_version, correlation_id = peek_request_header(payload)
    spec = lookup(api_key)
    if spec is None:
        raise UnsupportedVersion(
            f"unknown api key {api_key}",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    if not spec.supports(api_version):
        raise UnsupportedVersion(
            f"{spec.name} v{api_version} is not supported "
            f"(v{spec.min_version}-v{spec.max_version})",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    io = BytesIO(payload)
    try:
        header = _parse(REQUEST_HEADER, request_header_version(spec, api_version), io)
        body = _parse(spec.request, api_version, io)
    except Exception as exc:
        raise CorruptFrame(
            f"cannot decode {spec.name} v{api_version} request: {exc}",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        ) from exc
    return DecodedRequest(api_key, api_version, correlation_id, header["client_id"], body, spec)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """A size-prefixed response frame for ``body`` (a dict; missing fields take defaults)."""
    spec = _spec(api_key, api_version)
    io = BytesIO()
    io.write(b"\x00\x00\x00\x00")
    _build(
        RESPONSE_HEADER,
        response_header_version(spec, api_version),
        {"correlation_id": correlation_id},
        io,
    )
    _build(spec.response, api_version, body, io)
    out = io.getbuffer()
    struct.pack_into(">i", out, 0, len(out) - 4)
    return bytes(out)


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: Any
) -> bytes:
    """A size-prefixed request frame (the client direction, for tests and benchmarks)."""
    spec = _spec(api_key, api_version)
    io = BytesIO()
    header = {
        "request_api_key": api_key,
        "request_api_version": api_version,
        "correlation_id": correlation_id,
        "client_id": client_id,
    }
    _build(REQUEST_HEADER, request_header_version(spec, api_version), header, io)
    _build(spec.request, api_version, body, io)
    return frame(io.getvalue())


def decode_response(api_key: int, api_version: int, payload: bytes) -> tuple[int, Container]:
    """(correlation_id, body) of a response payload (the client direction)."""
    spec = _spec(api_key, api_version)
    io = BytesIO(payload)
    try:
        header = _parse(RESPONSE_HEADER, response_header_version(spec, api_version), io)
        body = _parse(spec.response, api_version, io)
    except Exception as exc:
        raise CorruptFrame(
            f"cannot decode {spec.name} v{api_version} response: {exc}",
            api_key=api_key,
            api_version=api_version,
        ) from exc
    return int(header["correlation_id"]), body


def api_versions_keys() -> list[dict[str, int]]:
    """Every registered API and its versions. The server advertises only those it also
    routes (``coordinator/broker/api_versions.py``): wire decodes some APIs before any
    handler serves them."""
    return [
        {"api_key": a.api_key, "min_version": a.min_version, "max_version": a.max_version}
        for a in VERSION_TABLE
    ]


def encode_unsupported_api_versions(correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions request of a version it does not know: error
    UNSUPPORTED_VERSION in a *v0* body listing ApiVersions' own range (header v0)."""
    spec = _spec(ApiKey.API_VERSIONS, 0)
    body = {
        "error_code": ErrorCode.UNSUPPORTED_VERSION,
        "api_keys": [
            {
                "api_key": ApiKey.API_VERSIONS,
                "min_version": spec.min_version,
                "max_version": spec.max_version,
            }
        ],
    }
    return encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)


def _spec(api_key: int, api_version: int) -> ApiSpec:
    spec = lookup(api_key)
    if spec is None or not spec.supports(api_version):
        raise ValueError(f"api key {api_key} v{api_version} is not implemented")
    return spec
