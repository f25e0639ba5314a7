"""Request headers v0-v2 and response headers v0-v1, and which one a message uses.

Request header v1 adds ``client_id`` (a nullable int16-length string, *not* compact even
in v2); v2 adds a tagged-field section. Response header v1 adds a tagged-field section.
Flexible requests use header v2, others v1; flexible responses use header v1, others v0 —
except ApiVersions responses, which always use v0 so that any client can read them.
"""

from __future__ import annotations

from wire.constants import ApiKey
from wire.fields import Field as F
from wire.fields import Message
from wire.registry import ApiSpec

__all__ = ["REQUEST_HEADER", "RESPONSE_HEADER", "request_header_version", "response_header_version"]


REQUEST_HEADER = Message(
    "RequestHeader",
    api_key=-1,
    valid="0-2",
    flexible="2+",
    fields=(
        F("request_api_key", "int16", "0+"),
        F("request_api_version", "int16", "0+"),
        F("correlation_id", "int32", "0+"),
        F("client_id", "string", "1+", nullable="1+", default="null", compact=False),
    ),
)

RESPONSE_HEADER = Message(
    "ResponseHeader",
    api_key=-1,
    valid="0-1",
    flexible="1+",
    fields=(F("correlation_id", "int32", "0+"),),
)


def request_header_version(spec: ApiSpec, api_version: int) -> int:
    """The request header version for a request of ``spec`` at ``api_version``."""
    return 2 if spec.request.is_flexible(api_version) else 1


def response_header_version(spec: ApiSpec, api_version: int) -> int:
    """The response header version (always 0 for ApiVersions)."""
    if spec.api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if spec.response.is_flexible(api_version) else 0
