"""The server handler of a group API (``group_api``): the decoded request goes to the
group core in the coordinator runtime as it is, and the core's answer back to the wire."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import CoreHandler
from coordinator.server.context import Handler, group_runtime
from coordinator.server.context import RequestContext as ServerRequestContext
from coordinator.server.waiters import PendingReply, ReadyReply

__all__ = ["GroupApi", "group_api"]


class GroupApi:
    """The server handler of a group API: the decoded request goes to the core as it is
    (the core reads it through its TypedDict), and the core's answer back to the wire.
    ``submit`` hands the request to the core at once and returns the pending reply (a
    connection pipelining requests collects it later), or None before the load finished."""

    __slots__ = ("__name__", "__qualname__", "handler")

    def __init__(self, handler: CoreHandler[Any]) -> None:
        self.handler = handler
        self.__name__ = handler.__name__
        self.__qualname__ = f"group_api({handler.__name__})"

    async def __call__(self, ctx: ServerRequestContext, request: wire.DecodedRequest) -> Any:
        return await group_runtime(ctx).call(self.handler, ctx, request.body)

    def submit(
        self, ctx: ServerRequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        pending: PendingReply | ReadyReply | None = group_runtime(ctx).submit(
            self.handler, ctx, request.body)
        return pending


def group_api(handler: CoreHandler[Any]) -> Handler:
    """``handler`` as a server handler (``GroupApi``)."""
    return GroupApi(handler)
