"""The server's request decoding and response encoding, with hand-coded paths for the APIs
a consumer sends all the time (OffsetCommit, Heartbeat) in front of the construct codec.

``decode_request`` / ``encode_response`` behave as ``wire.codec``'s: same results, same
errors. A hand-coded path handles the common well-formed shapes (no tagged fields, no
unexpected nulls) in a fraction of the codec's time (the codec spends most of an
OffsetCommit's decoding in construct's per-field parsers); whatever it does not handle it
leaves to the codec, which decodes or rejects the frame exactly as before. Both directions
are checked against the codec byte for byte in tests/wire/test_offset_commit_fast.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from construct import Container

from wire.apis import heartbeat, offset_commit
from wire.codec import DecodedRequest
from wire.codec import decode_request as codec_decode_request
from wire.codec import encode_response as codec_encode_response
from wire.constants import ApiKey
from wire.fast_frames import REQUEST_PREFIX
from wire.registry import ApiSpec

__all__ = ["decode_request", "encode_response"]

_Decoder = Callable[[bytes, int, Callable[..., Any]], tuple[str | None, Any]]
_Encoder = Callable[[int, int, Mapping[str, Any]], bytes]

_DECODERS: dict[int, tuple[ApiSpec, _Decoder]] = {
    ApiKey.OFFSET_COMMIT: (offset_commit.API, offset_commit.decode_request_body),
    ApiKey.HEARTBEAT: (heartbeat.API, heartbeat.decode_request_body),
}
_ENCODERS: dict[int, tuple[ApiSpec, _Encoder]] = {
    ApiKey.OFFSET_COMMIT: (offset_commit.API, offset_commit.encode_response_body),
    ApiKey.HEARTBEAT: (heartbeat.API, heartbeat.encode_response_body),
}


def decode_request(payload: bytes) -> DecodedRequest:
    """``wire.codec.decode_request``, by hand for the common OffsetCommit and Heartbeat."""
    if len(payload) >= REQUEST_PREFIX.size:
        api_key, api_version, correlation_id = REQUEST_PREFIX.unpack_from(payload)
        fast = _DECODERS.get(api_key)
        if fast is not None:
            spec, decode = fast
            if spec.supports(api_version):
                try:
                    client_id, body = decode(payload, api_version, Container)
                except Exception:  # any shape the hand-coded path leaves to the codec
                    pass
                else:
                    return DecodedRequest(api_key, api_version, correlation_id, client_id,
                                          body, spec)
    return codec_decode_request(payload)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """``wire.codec.encode_response``, by hand for the common OffsetCommit and Heartbeat."""
    fast = _ENCODERS.get(api_key)
    if fast is not None:
        spec, encode = fast
        if spec.supports(api_version):
            try:
                return encode(api_version, correlation_id, body)
            except Exception:  # any shape the hand-coded path leaves to the codec
                pass
    return codec_encode_response(api_key, api_version, correlation_id, body)
