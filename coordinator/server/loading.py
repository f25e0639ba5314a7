"""The answers of the coordinator APIs while the coordinator loads.

Kafka's group and transaction coordinators answer COORDINATOR_LOAD_IN_PROGRESS while they
replay their partition of ``__consumer_offsets`` / ``__transaction_state``, and clients
retry (Java's consumer and producer, librdkafka, kafka-python all treat it as retriable);
Metadata, ApiVersions and FindCoordinator are answered meanwhile. kcoord loads its whole log
at start, so until ``Server.loaded`` every coordinator API -- every route with a
``routing`` (``coordinator/server/route.py``), read off the routes once they are imported
(``CoordinatorApis``) -- that has waited ``LOAD_WAIT_S`` for it gets that answer
here, at the connection, instead of silence: the answer Kafka 4 gives when the coordinator
cannot run a request, shaped by the route's routing (``error_answers.py``: the error at the
top and in every entry the request named, one entry per key for the APIs that name several,
an empty list for the listings -- except Heartbeat, which Kafka's GroupCoordinatorService
answers NONE while loading).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from coordinator.server.error_answers import error_answer
from coordinator.server.route import Routing
from wire.codec import DecodedRequest
from wire.constants import ErrorCode

if TYPE_CHECKING:
    from coordinator.server.context import ServerState

__all__ = ["LOAD_WAIT_S", "CoordinatorApis", "wait_for_handler_or_routes"]

#: How long a coordinator request waits for the load before it is answered
#: COORDINATOR_LOAD_IN_PROGRESS: a small data directory loads within it and the request is
#: answered as if the coordinator had always been there (some clients surface error 14 to
#: the application instead of retrying: kafka-python's ``committed()``); a large one gets
#: Kafka's answer instead of silence.
LOAD_WAIT_S = 2.0


class CoordinatorApis:
    """The coordinator APIs (``RouteTable.coordinator_routing``: the routes with a
    ``routing``), known once every route is imported -- before the log is replayed, so
    within the load's first moments -- and their answers while the coordinator loads."""

    __slots__ = ("_imported", "_routing")

    def __init__(self) -> None:
        self._routing: Mapping[int, Routing] = {}
        self._imported = trio.Event()

    def imported(self, routing: Mapping[int, Routing]) -> None:
        """Every route is imported: ``routing`` is ``RouteTable.coordinator_routing``."""
        self._routing = routing
        self._imported.set()

    async def includes(self, api_key: int) -> bool:
        """Whether ``api_key`` is a coordinator API (once the routes are imported)."""
        await self._imported.wait()
        return api_key in self._routing

    def load_in_progress(self, request: DecodedRequest) -> Any:
        """The answer to a coordinator API's request while the coordinator loads."""
        return error_answer(request, self._routing[request.api_key],
                            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)


async def wait_for_handler_or_routes(server: ServerState, api_key: int) -> None:
    """Until ``api_key``'s handler is added, every route is imported (``includes`` then
    answers at once) or loading ends, whichever comes first: the broker surface (Metadata)
    is served before every route is imported, and its first request must not wait for the
    rest to learn that it is no coordinator API (issue 33: exec to the first Metadata)."""
    async with trio.open_nursery() as race:

        async def until(waiter: Any) -> None:
            await waiter()
            race.cancel_scope.cancel()

        race.start_soon(until, partial(server.wait_for_handler, api_key))
        race.start_soon(until, partial(server.coordinator_apis.includes, api_key))
