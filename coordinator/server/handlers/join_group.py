"""JoinGroup (API 11), versions 0-9: wire <-> ``coordinator.core`` translation.

v0 has no rebalance timeout (the core uses the session timeout); v4+ dynamic members are
asked to rejoin with their id (MEMBER_ID_REQUIRED); v5 group.instance.id; v7 the response
carries protocol_type and a nullable protocol_name (before v7 it is a non-null string);
v8 reason; v9 skip_assignment.
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import client_host, runtime

API_KEY = 11


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Join (or rejoin) a group; parked until the join phase completes."""
    body = request.body
    req = JoinGroupRequest(
        api_version=ctx.api_version,
        group_id=body["group_id"],
        session_timeout_ms=body["session_timeout_ms"],
        rebalance_timeout_ms=body["rebalance_timeout_ms"],
        member_id=body["member_id"],
        group_instance_id=body["group_instance_id"],
        protocol_type=body["protocol_type"],
        protocols=tuple(
            JoinGroupRequestProtocol(p["name"], bytes(p["metadata"])) for p in body["protocols"]
        ),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        reason=body["reason"],
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.join_group, req, JoinGroupResponse)
    return to_wire(resp, ctx.api_version)


def to_wire(resp: JoinGroupResponse, version: int) -> dict[str, Any]:
    """The response body for ``version``."""
    protocol_name = resp.protocol_name
    if protocol_name is None and version < 7:
        protocol_name = ""
    return {
        "error_code": resp.error_code,
        "generation_id": resp.generation_id,
        "protocol_type": resp.protocol_type,
        "protocol_name": protocol_name,
        "leader": resp.leader,
        "skip_assignment": resp.skip_assignment,
        "member_id": resp.member_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "metadata": m.metadata,
            }
            for m in resp.members
        ],
    }
