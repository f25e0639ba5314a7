"""Request quotas: ``request_percentage`` enforced on every request (Kafka's
``ClientRequestQuotaManager`` as ``KafkaApis.sendResponseMaybeThrottle`` applies it), once
such a quota is set (until then handlers are not wrapped at all, and the fast lane serves).

- What a request costs is the time its handler ran: the sum of its coroutine's steps, not
  the waits between them (a long poll, an append's fsync, a parked join), as Kafka counts
  a request handler thread's time and not purgatory's. It is recorded against the client's
  rate as percent-seconds (``nanosToPercentage``), so the rate is the percentage of one
  thread the client kept busy, compared with its quota (``coordinator.configs.quota_rates``:
  which quota applies, the sampled rate, the throttle time).
- Over the quota, the answer carries ``throttle_time_ms`` (at most one quota window, 1 s, as
  ``ClientRequestQuotaManager`` caps it; the larger of this and a byte-rate throttle) and
  the connection is muted until then: its next request waits. Clients honouring
  ``throttle_time_ms`` wait themselves.
- Exempt, as Kafka's ``sendResponseExemptThrottle``: a follower's Fetch (``replica_id`` >= 0).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any

import trio

from coordinator.server.context import group_runtime, user_of
from wire.constants import ApiKey

if TYPE_CHECKING:
    import wire
    from coordinator.configs.quota_rates import QuotaRates
    from coordinator.server.context import Handler, RequestContext

__all__ = ["RequestQuotaHandler", "TimedSteps"]

#: Kafka's ``NanosToPercentagePerSecond``: 100 % per second of one thread.
_PERCENT_PER_NANOSECOND = 100 / 1e9


class TimedSteps:
    """Awaits an awaitable (a handler's coroutine) and sums how long its own steps ran
    (``nanos``), leaving out the time it waited between them."""

    __slots__ = ("awaitable", "nanos")

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable
        self.nanos = 0

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine = self.awaitable.__await__()
        sent: Any = None
        thrown: BaseException | None = None
        clock = time.perf_counter_ns
        while True:
            began = clock()
            try:
                yielded = coroutine.send(sent) if thrown is None else coroutine.throw(thrown)
            except StopIteration as done:
                return done.value
            finally:
                self.nanos += clock() - began
            try:
                sent, thrown = (yield yielded), None
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as exc:  # (trio's cancellation, delivered into the handler)
                sent, thrown = None, exc


class RequestQuotaHandler:
    """A handler whose requests are timed and throttled (module docstring)."""

    __slots__ = ("handler", "rates")

    def __init__(self, handler: Handler, rates: QuotaRates) -> None:
        self.handler = handler
        self.rates = rates

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        from coordinator.configs.quota_rates import REQUEST_PERCENTAGE

        if request.api_key == ApiKey.FETCH and _from_follower(request.body):
            return await self.handler(ctx, request)
        runtime = group_runtime(ctx)
        muted_key = (ctx.state.identity.node_id, ctx.connection_id)
        muted = self.rates.muted_until.get(muted_key)
        if muted is not None:
            wait_ms = muted - runtime.now_ms()
            if wait_ms > 0:
                await trio.sleep(wait_ms / 1000)
        timed = TimedSteps(self.handler(ctx, request))
        response = await timed
        now = runtime.now_ms()
        throttle = self.rates.record(muted_key[0], REQUEST_PERCENTAGE, user_of(ctx),
                                     ctx.client_id or "", timed.nanos * _PERCENT_PER_NANOSECOND,
                                     now)
        if throttle > 0:
            self.rates.muted_until[muted_key] = max(self.rates.muted_until.get(muted_key, 0),
                                                    now + throttle)
            if isinstance(response, dict):
                response["throttle_time_ms"] = max(response.get("throttle_time_ms", 0),
                                                   throttle)
        return response


def _from_follower(body: Any) -> bool:
    replica = body.replica_state.replica_id if "replica_state" in body else -1
    return bool(replica >= 0 or body.get("replica_id", -1) >= 0)
