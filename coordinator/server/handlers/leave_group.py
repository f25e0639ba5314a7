"""LeaveGroup (API 13), versions 0-5: wire <-> ``coordinator.core`` translation.

v0-2 name one member_id; v3 a batch of members with group.instance.id (KIP-345); v4
flexible; v5 a per-member reason (KIP-800).
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 13


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Remove members from a group (triggering a rebalance when it has others)."""
    body = request.body
    version = ctx.api_version
    req = LeaveGroupRequest(
        api_version=version,
        group_id=body["group_id"],
        member_id=body["member_id"] if version < 3 else "",
        members=tuple(
            MemberIdentity(m["member_id"], m["group_instance_id"], m["reason"])
            for m in body["members"]
        )
        if version >= 3
        else (),
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.leave_group, req, LeaveGroupResponse)
    return {
        "error_code": resp.error_code,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "error_code": m.error_code,
            }
            for m in resp.members
        ],
    }
