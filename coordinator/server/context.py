"""The contract between the Trio runtime and the per-API handlers.

Every Kafka API has one handler module (``coordinator/server/handlers/<api>.py`` for the
group APIs, ``coordinator/broker/<api>.py`` for the broker surface) exporting::

    API_KEY: int
    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict | None

It returns the response body as a dict for ``wire.encode_response`` (missing fields take
their defaults), or ``None`` when Kafka sends no response (Produce with acks=0). A handler
may wait (Fetch long-poll, a parked JoinGroup): the connection answers in request order,
other connections are not blocked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import wire

__all__ = ["BrokerIdentity", "Handler", "RequestContext", "ServerState"]


@dataclass(frozen=True, slots=True)
class BrokerIdentity:
    """Who this broker says it is in Metadata and FindCoordinator answers."""

    node_id: int
    host: str
    port: int
    cluster_id: str


class ServerState(Protocol):
    """What handlers may reach: the broker's identity, its config (Kafka names), the topic
    store (``coordinator.broker.topics.TopicStore``) and the group coordinator runtime."""

    identity: BrokerIdentity
    config: dict[str, str]
    topics: Any
    groups: Any


@dataclass(frozen=True, slots=True)
class RequestContext:
    """One request's circumstances."""

    state: ServerState
    connection_id: int
    client_host: str
    client_id: str | None
    api_version: int
    correlation_id: int


Handler = Callable[[RequestContext, "wire.DecodedRequest"], Awaitable[dict[str, Any] | None]]
