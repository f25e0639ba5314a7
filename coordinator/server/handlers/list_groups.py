"""ListGroups (API 16), versions 0-5: wire <-> ``coordinator.core`` translation.

v3 flexible; v4 states filter (KIP-518) and group_state; v5 types filter and group_type
(every group here is "classic").
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import ListGroupsRequest, ListGroupsResponse
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 16


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """List the groups, optionally filtered by state and type."""
    body = request.body
    req = ListGroupsRequest(
        api_version=ctx.api_version,
        states_filter=tuple(body["states_filter"] or ()),
        types_filter=tuple(body["types_filter"] or ()),
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.list_groups, req, ListGroupsResponse)
    return {
        "error_code": resp.error_code,
        "groups": [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.group_state,
                "group_type": g.group_type,
            }
            for g in resp.groups
        ],
    }
