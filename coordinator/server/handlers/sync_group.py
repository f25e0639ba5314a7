"""SyncGroup (API 14), versions 0-5: wire <-> ``coordinator.core`` translation.

v3 group.instance.id; v4 flexible; v5 protocol_type/protocol_name in request and response
(KIP-559; None before).
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import SyncGroupRequest, SyncGroupRequestAssignment, SyncGroupResponse
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 14


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Sync a member's assignment; followers are parked until the leader's arrives."""
    body = request.body
    req = SyncGroupRequest(
        api_version=ctx.api_version,
        group_id=body["group_id"],
        generation_id=body["generation_id"],
        member_id=body["member_id"],
        group_instance_id=body["group_instance_id"],
        protocol_type=body["protocol_type"],
        protocol_name=body["protocol_name"],
        assignments=tuple(
            SyncGroupRequestAssignment(a["member_id"], bytes(a["assignment"]))
            for a in body["assignments"]
        ),
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.sync_group, req, SyncGroupResponse)
    return {
        "error_code": resp.error_code,
        "protocol_type": resp.protocol_type,
        "protocol_name": resp.protocol_name,
        "assignment": resp.assignment,
    }
