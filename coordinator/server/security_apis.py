"""The server side of the security APIs (CreateAcls, DescribeAcls, DeleteAcls,
AlterUserScramCredentials, DescribeUserScramCredentials): each runs one handler of the
security shard (``coordinator.security.shard``) through the coordinator runtime, so a
change is answered once its records are durable and applied (persist, then apply)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.context import group_runtime

if TYPE_CHECKING:
    from coordinator.server.context import Handler, RequestContext

__all__ = ["security_api"]


def security_api(name: str) -> Handler:
    """The server handler running ``SecurityShard.<name>`` (e.g. ``"create_acls"``)."""

    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        from coordinator.security.shard import SecurityShard

        runtime = group_runtime(ctx)
        shard_handler: Callable[..., Any] = getattr(SecurityShard, name)
        return await runtime.call(shard_handler, ctx, request.body, runtime.security)

    handle.__name__ = handle.__qualname__ = f"handle_{name}"
    return handle
