"""The server's request decoding and response encoding, with hand-coded paths for the APIs
a consumer sends all the time (OffsetCommit, Heartbeat, ConsumerGroupHeartbeat) in front of
the construct codec.

``decode_request`` / ``encode_response`` behave as ``wire.codec``'s: same results, same
errors. A hand-coded path handles the common well-formed shapes (no tagged fields, no
unexpected nulls) in a fraction of the codec's time (the codec spends most of an
OffsetCommit's decoding in construct's per-field parsers); whatever it does not handle it
leaves to the codec, which decodes or rejects the frame exactly as before. Both directions
are checked against the codec byte for byte in tests/wire/test_offset_commit_fast.py and
tests/wire/test_consumer_group_heartbeat_codec.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from construct import Container

from wire import consumer_group_heartbeat_codec
from wire.apis import consumer_group_heartbeat, heartbeat, offset_commit
from wire.codec import DecodedRequest
from wire.codec import decode_request as codec_decode_request
from wire.codec import encode_response as codec_encode_response
from wire.constants import ApiKey
from wire.fast_frames import REQUEST_PREFIX, Malformed
from wire.registry import ApiSpec

__all__ = ["HAND_CODED_API_KEYS", "decode_request", "encode_response"]

_Decoder = Callable[[bytes, int, Callable[..., Any]], tuple[str | None, Any]]
_Encoder = Callable[[int, int, Mapping[str, Any]], bytes]



def _consumer_group_heartbeat_request(
    payload: bytes, _version: int, _container: Callable[..., Any]
) -> tuple[str | None, Any]:
    decoded = consumer_group_heartbeat_codec.decode_request_body(payload)
    if decoded is None:
        raise Malformed("left to the codec")
    return decoded


def _consumer_group_heartbeat_response(version: int, correlation_id: int,
                                       body: Mapping[str, Any]) -> bytes:
    frame = consumer_group_heartbeat_codec.encode_response_frame(version, correlation_id, body)
    if frame is None:
        raise Malformed("left to the codec")
    return frame


#: The one list of hand-coded APIs: api key -> (spec, request decoder, response encoder).
#: The server's route table reads which APIs have one from here (``HAND_CODED_API_KEYS``);
#: wire, the lowest floor, cannot read the routes.
_CODECS: dict[int, tuple[ApiSpec, _Decoder, _Encoder]] = {
    ApiKey.OFFSET_COMMIT: (
        offset_commit.API, offset_commit.decode_request_body, offset_commit.encode_response_body),
    ApiKey.HEARTBEAT: (
        heartbeat.API, heartbeat.decode_request_body, heartbeat.encode_response_body),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (
        consumer_group_heartbeat.API, _consumer_group_heartbeat_request,
        _consumer_group_heartbeat_response),
}

#: The APIs with a hand-coded path in front of the codec.
HAND_CODED_API_KEYS: frozenset[int] = frozenset(_CODECS)

#: api key -> (spec, its lowest and highest version, the hand-coded decoder)
_DECODING: dict[int, tuple[ApiSpec, int, int, _Decoder]] = {
    key: (spec, spec.min_version, spec.max_version, decode)
    for key, (spec, decode, _) in _CODECS.items()
}


#: api key -> (its lowest and highest version, the hand-coded encoder)
_ENCODING: dict[int, tuple[int, int, _Encoder]] = {
    key: (spec.min_version, spec.max_version, encode)
    for key, (spec, _, encode) in _CODECS.items()
}


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    setter: Callable[[Any, Any], None] = DecodedRequest.__dict__[name].__set__
    return setter


# A DecodedRequest filled slot by slot: half the cost of its frozen dataclass __init__
# (which sets each field through object.__setattr__), on every request of the hot APIs.
_new_request = object.__new__
_set_api_key = _slot_setter("api_key")
_set_api_version = _slot_setter("api_version")
_set_correlation_id = _slot_setter("correlation_id")
_set_client_id = _slot_setter("client_id")
_set_body = _slot_setter("body")
_set_spec = _slot_setter("spec")


def decode_request(payload: bytes) -> DecodedRequest:
    """``wire.codec.decode_request``, by hand for the common shapes of the hot APIs."""
    if len(payload) >= REQUEST_PREFIX.size:
        api_key, api_version, correlation_id = REQUEST_PREFIX.unpack_from(payload)
        fast = _DECODING.get(api_key)
        if fast is not None:
            spec, lowest, highest, decode = fast
            if lowest <= api_version <= highest:
                try:
                    client_id, body = decode(payload, api_version, Container)
                except Exception:  # any shape the hand-coded path leaves to the codec
                    pass
                else:
                    request: DecodedRequest = _new_request(DecodedRequest)
                    _set_api_key(request, api_key)
                    _set_api_version(request, api_version)
                    _set_correlation_id(request, correlation_id)
                    _set_client_id(request, client_id)
                    _set_body(request, body)
                    _set_spec(request, spec)
                    return request
    return codec_decode_request(payload)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """``wire.codec.encode_response``, by hand for the common shapes of the hot APIs."""
    fast = _ENCODING.get(api_key)
    if fast is not None:
        lowest, highest, encode = fast
        if lowest <= api_version <= highest:
            try:
                return encode(api_version, correlation_id, body)
            except Exception:  # any shape the hand-coded path leaves to the codec
                pass
    return codec_encode_response(api_key, api_version, correlation_id, body)
