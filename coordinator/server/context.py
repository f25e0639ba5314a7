"""The contract between the connections, the handler table and the handlers.

Every served Kafka API has one route module in ``coordinator/server/apis/`` whose
``ROUTE`` names a handler (``coordinator/server/route.py``)::

    async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict | None

returning the response body as a dict for ``wire.encode_response`` (missing fields take
their defaults), or ``None`` when Kafka sends no response (Produce with acks=0). A handler
may wait (Fetch long-poll, a parked JoinGroup): the connection answers in request order,
other connections are not blocked. Group APIs are the core's handlers behind
``group_api.group_api`` or their route module's code around them; the broker APIs' code is
their route module's ``handle``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from coordinator.server.identity import BrokerIdentity

if TYPE_CHECKING:
    import trio

    import wire
    from coordinator.broker.topics import TopicStore
    from coordinator.server.cluster import Cluster
    from coordinator.server.connection_socket import Connection
    from coordinator.server.faults import FaultInjector
    from coordinator.server.runtime import CoordinatorRuntime
    from coordinator.server.share_runtime import ShareRuntime
    from coordinator.server.txn_runtime import TransactionRuntime

__all__ = ["ApiTraits", "BrokerIdentity", "Handler", "RequestContext", "ServerState",
           "group_runtime", "listener_of", "user_of"]


@dataclass(frozen=True, slots=True)
class ApiTraits:
    """What a connection reads off the routes (``apis.RouteTable.traits``), by API key:
    whose handler may wait long (write earlier answers first), whose answer may park
    (watch for the client leaving), which may be submitted behind pending replies. Empty
    until the handlers are loaded: only ApiVersions is answered before, and it does none."""

    may_wait: frozenset[int] = frozenset()
    parks: frozenset[int] = frozenset()
    pipelined: frozenset[int] = frozenset()


class CoordinatorApisWhileLoading(Protocol):
    """The coordinator APIs and their answers while the coordinator loads
    (``coordinator.server.loading.CoordinatorApis``)."""

    async def includes(self, api_key: int) -> bool:
        """Whether ``api_key`` is a coordinator API (once the routes are imported)."""

    def load_in_progress(self, request: wire.DecodedRequest) -> Any:
        """The answer to a coordinator API's request while the coordinator loads."""


class ServerState(Protocol):
    """The server as connections and handlers see it: identity, config (Kafka names), the
    topic store (``coordinator.broker.topics.TopicStore``), the group coordinator runtime
    (``coordinator.server.runtime.CoordinatorRuntime``), the handlers (filled in as the
    server loads: the broker surface, then the coordinator's) and the keys of the handler
    table, and the connection limits."""

    identity: BrokerIdentity
    config: dict[str, str]
    #: The topic store (None until the broker surface is loaded, and on a coordinator-only
    #: server); the group, transaction and share runtimes (None until the coordinator is
    #: loaded: only its APIs' handlers may take them as given).
    topics: TopicStore | None
    groups: CoordinatorRuntime | None
    transactions: TransactionRuntime | None
    shares: ShareRuntime | None
    #: The brokers' cluster (None with one broker).
    cluster: Cluster | None
    #: What DescribeConfigs reports as listeners, advertised.listeners and log.dirs: the
    #: address the listeners are bound to, whether the advertised one was given, the
    #: data directory (None: in memory).
    bind_host: str
    advertised_given: bool
    data_dir: str | None
    handlers: dict[int, Handler]
    traits: ApiTraits
    served_api_keys: Collection[int]
    loaded: trio.Event
    #: Injected misbehaviour for tests (None: none).
    faults: FaultInjector | None
    max_request_bytes: int
    idle_seconds: float
    #: Open connections by id.
    connections: dict[int, Connection]

    @property
    def coordinator_apis(self) -> CoordinatorApisWhileLoading:
        """The coordinator APIs and their answers while the coordinator loads."""

    async def wait_for_handler(self, api_key: int) -> Handler | None:
        """``api_key``'s handler once the server has loaded it (None: not served)."""


class RequestContext(NamedTuple):
    """One request's circumstances (the core's ``RequestContext`` protocol is a subset).
    Made for every request: a NamedTuple, which the hot path builds with ``tuple.__new__``
    (no Python call: about a third of a slotted dataclass's ``__init__``)."""

    state: ServerState
    connection_id: int
    client_host: str  # Kafka's InetAddress.toString form: "/127.0.0.1"
    client_id: str | None
    api_version: int
    correlation_id: int


Handler = Callable[[RequestContext, "wire.DecodedRequest"], Awaitable[dict[str, Any] | None]]


def group_runtime(ctx: RequestContext) -> CoordinatorRuntime:
    """The group coordinator's runtime: the coordinator APIs are served only once it is
    loaded (RuntimeError before)."""
    runtime = ctx.state.groups
    if runtime is None:
        raise RuntimeError("the group coordinator is not loaded")
    return runtime


def user_of(ctx: RequestContext) -> str:
    """The name of the connection's principal (``ANONYMOUS`` without authentication)."""
    conn = ctx.state.connections.get(ctx.connection_id)
    principal: str = getattr(conn, "principal", "User:ANONYMOUS")
    return principal.partition(":")[2]


def listener_of(ctx: RequestContext) -> str | None:
    """The name of the listener ``ctx``'s request arrived on (None: the unnamed PLAINTEXT
    listener of a server started without ``listeners``); Metadata, FindCoordinator and
    DescribeCluster answer with that listener's addresses, as Kafka does."""
    conn = ctx.state.connections.get(ctx.connection_id)
    name: str | None = getattr(conn, "listener", None)
    return name
