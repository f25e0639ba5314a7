"""DeleteGroups (API 42), versions 0-2: wire <-> ``coordinator.core`` translation.

v2 flexible. Only Empty (or Dead) groups can be deleted (NON_EMPTY_GROUP otherwise).
"""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import DeleteGroupsRequest, DeleteGroupsResponse
from coordinator.server.context import RequestContext
from coordinator.server.handlers._common import runtime

API_KEY = 42


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Delete groups and their committed offsets."""
    req = DeleteGroupsRequest(
        api_version=ctx.api_version, groups_names=tuple(request.body["groups_names"])
    )
    rt = runtime(ctx)
    resp = await rt.call(rt.coordinator.delete_groups, req, DeleteGroupsResponse)
    return {"results": [{"group_id": r.group_id, "error_code": r.error_code} for r in resp.results]}
