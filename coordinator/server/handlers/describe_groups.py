"""DescribeGroups (API 15), versions 0-6: wire <-> ``coordinator.core`` translation.

v3 authorized operations: without an authorizer every group operation is allowed, so when
asked the broker answers READ, DELETE and DESCRIBE (Kafka's AclOperation codes 3, 6, 8);
v4 member group.instance.id; v5 flexible; v6 GROUP_ID_NOT_FOUND with an error message.
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import DescribeGroupsRequest, DescribeGroupsResponse, ErrorCode
from coordinator.core.messages import NO_AUTHORIZED_OPERATIONS
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 15

# Bit set of AclOperation codes: READ (3), DELETE (6), DESCRIBE (8).
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Describe groups: state, protocol and members (metadata/assignment when Stable)."""
    body = request.body
    include_ops = bool(body["include_authorized_operations"])
    req = DescribeGroupsRequest(
        api_version=ctx.api_version,
        groups=tuple(body["groups"]),
        include_authorized_operations=include_ops,
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.describe_groups, req, DescribeGroupsResponse)
    groups = []
    for g in resp.groups:
        ops = g.authorized_operations
        if include_ops and ops == NO_AUTHORIZED_OPERATIONS and g.error_code == ErrorCode.NONE:
            ops = GROUP_AUTHORIZED_OPERATIONS
        groups.append(
            {
                "error_code": g.error_code,
                "error_message": (
                    f"Group {g.group_id} not found."
                    if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND
                    else None
                ),
                "group_id": g.group_id,
                "group_state": g.group_state,
                "protocol_type": g.protocol_type,
                "protocol_data": g.protocol_data,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": m.member_metadata,
                        "member_assignment": m.member_assignment,
                    }
                    for m in g.members
                ],
                "authorized_operations": ops,
            }
        )
    return {"groups": groups}
