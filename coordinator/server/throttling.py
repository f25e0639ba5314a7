"""Client byte-rate quotas enforced on Produce and Fetch (Kafka's ``ClientQuotaManager`` as
``KafkaApis`` applies it), once a ``producer_byte_rate`` or ``consumer_byte_rate`` quota is set
(``coordinator.configs.quota_rates`` measures; until then handlers are not wrapped at all).

- Produce: the request's record bytes are recorded against the client's producer rate after
  it is served; over the quota, the answer carries ``throttle_time_ms``.
- Fetch (a consumer's): capped at one quota window's bytes (quota x 10 s), then the
  answer's encoded size is recorded against its consumer rate; over the quota, the bytes are
  taken back and the answer is empty with ``throttle_time_ms`` (``getThrottledResponse``),
  the data left for the next fetch.
- Either way the connection is muted for the throttle time: its next Produce or Fetch waits
  until then (Kafka mutes the whole channel; the clients that honour ``throttle_time_ms``,
  Produce v6+ and Fetch v8+, wait themselves). Older versions get their answer only once the
  throttle time has passed, as Kafka delays it.

The client is the connection's principal name (``User:alice`` -> ``alice``, ``ANONYMOUS``
without authentication) and the request's client id. ``request_percentage``
is enforced on every request by ``server.request_quota``; ``controller_mutation_rate`` and
``connection_creation_rate`` are stored and described, not enforced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from coordinator.server.context import group_runtime, user_of
from wire.constants import ApiKey
from wire.fast_codec import encode_response

if TYPE_CHECKING:
    import wire
    from coordinator.configs.quota_rates import QuotaRates
    from coordinator.server.context import Handler, RequestContext, ServerState

__all__ = ["THROTTLED_API_KEYS", "ThrottledHandler", "under_quotas"]

THROTTLED_API_KEYS = frozenset({ApiKey.PRODUCE, ApiKey.FETCH})
#: The first versions whose clients throttle themselves (``shouldClientThrottle``, KIP-219).
_CLIENT_THROTTLES: dict[int, int] = {ApiKey.PRODUCE: 6, ApiKey.FETCH: 8}


def under_quotas(server: ServerState, api_key: int, handler: Handler) -> Handler:
    """``handler`` under the client quotas that are set: byte rates (Produce, Fetch) and
    request quotas (``server.request_quota``, every API); itself when none is (every
    request passes here: a few attribute reads)."""
    groups = server.groups
    rates: QuotaRates | None = (getattr(groups.configs, "throttles", None)
                                if groups is not None else None)
    if rates is None:
        return handler
    quotas = rates.quotas
    if quotas.byte_rate_quotas and api_key in THROTTLED_API_KEYS:
        handler = ThrottledHandler(handler, rates)
    if quotas.request_quotas:
        from coordinator.server.request_quota import RequestQuotaHandler  # (only then)

        handler = RequestQuotaHandler(handler, rates)
    return handler


class ThrottledHandler:
    """A Produce or Fetch handler with its client's byte-rate quota (module docstring)."""

    __slots__ = ("handler", "rates")

    def __init__(self, handler: Handler, rates: QuotaRates) -> None:
        self.handler = handler
        self.rates = rates

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        # Imported here: the connection imports this module before the first ApiVersions,
        # and the quota modules bring storage's record types (tens of milliseconds).
        from coordinator.configs.quota_rates import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE

        runtime = group_runtime(ctx)
        node = ctx.state.identity.node_id
        muted = self.rates.muted_until.get((node, ctx.connection_id))
        if muted is not None:
            wait_ms = muted - runtime.now_ms()
            if wait_ms > 0:
                await trio.sleep(wait_ms / 1000)
        user, client_id = user_of(ctx), ctx.client_id or ""
        if request.api_key == ApiKey.PRODUCE:
            size = sum(len(p.records or b"") for t in request.body.topic_data
                       for p in t.partition_data)
            response = await self.handler(ctx, request)
            throttle = self.rates.record(node, PRODUCER_BYTE_RATE, user, client_id, size,
                                         runtime.now_ms())
        else:
            body = request.body
            replica = body.replica_state.replica_id if "replica_state" in body else -1
            if replica >= 0 or body.get("replica_id", -1) >= 0:
                # a follower's fetch: replication quotas are not modelled
                return await self.handler(ctx, request)
            window = self.rates.max_value_in_window(CONSUMER_BYTE_RATE, user, client_id)
            if window is not None:  # Kafka caps the fetch at one quota window's bytes
                body.max_bytes = min(body.max_bytes, int(window))
                body.min_bytes = min(body.min_bytes, body.max_bytes)
            response = await self.handler(ctx, request)
            if response is None:
                return response
            size = len(encode_response(request.api_key, request.api_version,
                                       request.correlation_id, response))
            now = runtime.now_ms()
            throttle = self.rates.record(node, CONSUMER_BYTE_RATE, user, client_id, size, now)
            if throttle > 0:
                self.rates.unrecord(node, CONSUMER_BYTE_RATE, user, client_id, size, now)
                response = {"throttle_time_ms": 0, "error_code": response["error_code"],
                            "session_id": response.get("session_id", 0), "responses": []}
        if throttle > 0:
            self.rates.muted_until[(node, ctx.connection_id)] = runtime.now_ms() + throttle
            if response is not None:
                response["throttle_time_ms"] = max(response.get("throttle_time_ms", 0),
                                                   throttle)
            if request.api_version < _CLIENT_THROTTLES[request.api_key]:
                await trio.sleep(throttle / 1000)  # Kafka delays the answer of older clients
        return response
