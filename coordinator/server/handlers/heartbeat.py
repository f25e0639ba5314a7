"""Heartbeat (API 12), versions 0-4: wire <-> ``coordinator.core`` translation.

v3 group.instance.id; v4 flexible.
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import HeartbeatRequest, HeartbeatResponse
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 12


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Keep a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin."""
    body = request.body
    req = HeartbeatRequest(
        api_version=ctx.api_version,
        group_id=body["group_id"],
        generation_id=body["generation_id"],
        member_id=body["member_id"],
        group_instance_id=body["group_instance_id"],
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.heartbeat, req, HeartbeatResponse)
    return {"error_code": resp.error_code}
