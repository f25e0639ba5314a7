"""kcoord's wire layer: Kafka's binary protocol, decoded and encoded with construct.

Pure: no I/O, no clocks. ``FrameReader`` turns a byte stream into frames,
``decode_request`` / ``encode_response`` turn frames into messages and back.
"""

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
from wire.constants import ApiKey, ErrorCode
from wire.errors import CorruptFrame, FrameTooLarge, UnsupportedVersion
from wire.framing import DEFAULT_MAX_FRAME_BYTES, NEED_DATA, FrameReader, frame
from wire.registry import ApiSpec, all_apis, lookup

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "NEED_DATA",
    "ApiKey",
    "ApiSpec",
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
