"""ApiVersions (key 18), versions 0-4: the APIs and versions this server implements.

The list is every API that is both decoded by ``wire`` (its registry's version range) and
handled (a route module of ``coordinator/server/apis/``), with one
deliberate difference that Kafka 4 makes too (KAFKA-18659): Produce is advertised from
version 0 although only 3+ is served, because librdkafka only enables compression when
Produce v0 is in the broker's range. Clients always pick the highest common version, so
none sends v0-2 to a broker that lists v13.

The server answers an ApiVersions request of an unsupported version itself
(``wire.encode_unsupported_api_versions``); this handler sees only versions 0-4. As in
Kafka, v3+ requests must name the client software with ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*
[a-zA-Z0-9])?``; others get INVALID_REQUEST.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker import config as broker_config
from coordinator.server.route import ALLOWED, Route
from wire import ApiKey, ErrorCode
from wire.constants import (
    MAX_SHARE_VERSION,
    MAX_TRANSACTION_VERSION,
    SHARE_VERSION_FEATURE,
    TRANSACTION_VERSION_FEATURE,
)

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = [
    "ROUTE",
    "TRANSACTION_VERSION_FEATURE",
    "advertised_api_versions",
    "client_software_valid",
    "feature_fields",
    "handle",
]

_FEATURE_MIN_0_VERSION = 4  # ApiVersions v4: a supported feature may have minimum 0
#: The features never change while the server runs; Kafka's epoch is the metadata offset of
#: the last feature change.
_FINALIZED_FEATURES_EPOCH = 0

_SOFTWARE_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def advertised_api_versions(
    handled: Collection[int],
    specs: Iterable[wire.ApiSpec | wire.ApiVersionRange] = wire.VERSION_TABLE,
) -> list[dict[str, int]]:
    """The ``api_keys`` of a successful answer: the decoded (``specs``, default the wire
    registry's table) and ``handled`` APIs, by key."""
    keys = []
    for spec in sorted(specs, key=lambda s: s.api_key):
        if spec.api_key not in handled:
            continue
        low = 0 if spec.api_key == ApiKey.PRODUCE else spec.min_version  # KAFKA-18659
        keys.append({"api_key": spec.api_key, "min_version": low,
                     "max_version": spec.max_version})
    return keys


def client_software_valid(api_version: int, name: str | None, version: str | None) -> bool:
    """Whether a request of ``api_version`` names its client software as Kafka requires
    (versions before 3 name none)."""
    return api_version < 3 or bool(
        _SOFTWARE_NAME.fullmatch(name or "") and _SOFTWARE_NAME.fullmatch(version or "")
    )


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Answer with every implemented API and its version range."""
    body = request.body
    if not client_software_valid(
        request.api_version, body.client_software_name, body.client_software_version
    ):
        return {"error_code": ErrorCode.INVALID_REQUEST, "api_keys": [], "throttle_time_ms": 0}
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": advertised_api_versions(ctx.state.served_api_keys),
        "throttle_time_ms": 0,
        **feature_fields(broker_config.transaction_version(ctx.state.config),
                         request.api_version),
    }


def feature_fields(transaction_version: int, request_version: int) -> dict[str, Any]:
    """The feature fields (tagged, v3+): ``transaction.version`` supported 0-2 and finalized
    at the configured level, ``share.version`` supported 0-1 and finalized at 1 (KIP-932).
    As Kafka (KAFKA-17492), a v3 request does not get supported features whose minimum is
    0, and a level-0 feature is not finalized (KRaft removes a feature set to 0). Clients
    read the finalized level to decide on transaction version 2 (EndTxn v5, Produce v12,
    TxnOffsetCommit v5)."""
    supported = [] if request_version < _FEATURE_MIN_0_VERSION else [
        {"name": TRANSACTION_VERSION_FEATURE, "min_version": 0,
         "max_version": MAX_TRANSACTION_VERSION},
        {"name": SHARE_VERSION_FEATURE, "min_version": 0, "max_version": MAX_SHARE_VERSION}]
    finalized = [] if transaction_version == 0 else [
        {"name": TRANSACTION_VERSION_FEATURE, "max_version_level": transaction_version,
         "min_version_level": transaction_version}]
    # Share groups are served (ShareGroupHeartbeat and the rest): share.version at level 1.
    finalized.append({"name": SHARE_VERSION_FEATURE, "max_version_level": MAX_SHARE_VERSION,
                      "min_version_level": MAX_SHARE_VERSION})
    return {"supported_features": supported, "finalized_features": finalized,
            "finalized_features_epoch": _FINALIZED_FEATURES_EPOCH}


ROUTE = Route(
    ApiKey.API_VERSIONS,
    handle,
    acl=ALLOWED,
)
