"""ApiVersions (key 18), versions 0-4: the APIs and versions this server implements.

The list is the wire registry's (``wire.api_versions_keys()``), with one deliberate
difference that Kafka 4 makes too (KAFKA-18659): Produce is advertised from version 0
although only 3+ is served, because librdkafka only enables compression when Produce v0
is in the broker's range. Clients always pick the highest common version, so none sends
v0-2 to a broker that lists v13.

The server answers an ApiVersions request of an unsupported version itself
(``wire.encode_unsupported_api_versions``); this handler sees only versions 0-4. As in
Kafka, v3+ requests must name the client software with ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*
[a-zA-Z0-9])?``; others get INVALID_REQUEST.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import wire
from wire import ApiKey, ErrorCode

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["API_KEY", "advertised_api_versions", "handle"]

API_KEY = ApiKey.API_VERSIONS
_PRODUCE_KEY = 0
_SOFTWARE_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def advertised_api_versions() -> list[dict[str, int]]:
    """The ``api_keys`` of a successful answer."""
    keys = wire.api_versions_keys()
    for entry in keys:
        if entry["api_key"] == _PRODUCE_KEY:
            entry["min_version"] = 0
    return keys


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Answer with every implemented API and its version range."""
    body = request.body
    if request.api_version >= 3 and not (
        _SOFTWARE_NAME.fullmatch(body.client_software_name or "")
        and _SOFTWARE_NAME.fullmatch(body.client_software_version or "")
    ):
        return {"error_code": ErrorCode.INVALID_REQUEST, "api_keys": [], "throttle_time_ms": 0}
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": advertised_api_versions(),
        "throttle_time_ms": 0,
    }
