"""ConsumerGroupHeartbeat (68): a consumer-protocol member joins, heartbeats, gets its
assignment and leaves (KIP-848; the group core's ``coordinator/core/consumer/heartbeat.py``),
against the broker's current topics.

The steady heartbeat (every optional field null, as the codec's ``SteadyRequestBody``
says) has a shortcut: when the core's ``steady_heartbeat`` finds it steady and the runtime
may answer at once, the member's session timer moves and the answer is made here, without
the runtime's pending reply, Result, Reply and ScheduleTimer. It is the answer, session
deadline and (no) records the core's handler gives the same request. Everything else, and
everything while faults are injected, takes the handler."""

from __future__ import annotations

import wire
from coordinator.core.consumer.heartbeat import (
    handle_consumer_group_heartbeat,
    steady_heartbeat,
    steady_response,
)
from coordinator.server.api_support import ReadyReply, WithCurrentTopics, with_current_topics
from coordinator.server.context import RequestContext
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.server.runtime import PendingReply
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey
from wire.consumer_group_heartbeat_codec import SteadyRequestBody

__all__ = ["ROUTE", "consumer_group_heartbeat"]


class _ConsumerGroupHeartbeat(WithCurrentTopics):
    """ConsumerGroupHeartbeat, with the steady heartbeat's shortcut."""

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        runtime = with_current_topics(ctx)
        body = request.body
        if type(body) is SteadyRequestBody and not ctx.state.faults:
            now_ms = runtime.answer_now_ms()
            if now_ms is not None:
                steady = steady_heartbeat(runtime.coordinator, body["group_id"],
                                          body["member_id"], body["member_epoch"])
                if steady is not None:
                    runtime.arm_timer(steady.session_key,
                                      now_ms + steady.session_timeout_ms)
                    return ReadyReply(steady_response(steady))
        return runtime.submit(self.handler, ctx, body)


consumer_group_heartbeat = _ConsumerGroupHeartbeat(
    handle_consumer_group_heartbeat, "consumer_group_heartbeat",
    "ConsumerGroupHeartbeat against the broker's current topics.",
)


ROUTE = Route(
    ApiKey.CONSUMER_GROUP_HEARTBEAT,
    consumer_group_heartbeat,
    # Kafka 4 checks the group only (the subscribed topics are not authorized here).
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    pipelined=True,
    fast_codec=True,
    consumer_protocol=True,
)
