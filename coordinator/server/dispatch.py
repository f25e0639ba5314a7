"""One request's step from frame to answer, shared by a connection's task
(``connection.py``) and the ready reactor (``reactor.py``): decode -> look up its handler ->
submit -> encode (``serve_one``).

``handler_for`` is the one place a request meets its route's handler: anything that wraps
handlers per request hooks in there. Today that is the byte-rate quotas of Produce and Fetch
(``throttling.py``, once a quota is set) and fault injection (``FaultedHandler``: a
fault armed for the request's API, group, client or broker wraps that request's handler,
so every other request keeps the fast lane -- the reactor, pipelining, the inline answers
-- and the fault applies whichever lane the request came by); an authorization check
belongs there too.

``serve_one`` answers a request whose route is ``pipelined`` and whose reply is ready when
submitted (``answer_now``: nothing answered earlier is still pending) straight into the
caller's output buffer; anything else comes back as an ``Unanswered``, already decoded,
looked up and (when pipelinable) submitted, for the connection's task to finish. The
answer of a session-renewing request is recorded in the connection's tally here
(``tally.py``): at once, or through its pending reply when that is collected.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple, Protocol

import trio

from coordinator.server.context import Handler, RequestContext, ServerState
from coordinator.server.tally import RENEWING_API_KEYS, ConnectionTally
from coordinator.server.throttling import under_quotas
from wire import DecodedRequest
from wire.fast_codec import decode_request, encode_response

__all__ = ["FaultClose", "FaultedHandler", "Peer", "Unanswered", "handler_for", "serve_one"]

log = logging.getLogger(__name__)
_new = tuple.__new__  # (a NamedTuple's own __new__ is a Python call)


class FaultClose(Exception):
    """An injected fault closes the connection: before handling (``body`` None and not
    ``answered``) or after, once ``body`` is written."""

    def __init__(self, answered: bool, body: Any = None) -> None:
        super().__init__("fault injected")
        self.answered = answered
        self.body = body


class FaultedHandler:
    """A route's handler under one matched fault (``coordinator.server.faults``): drop the
    connection before or after, stall forever, delay, or answer an error instead. It has no
    ``submit``, so its request takes the connection task's path, which writes what it
    already answered before calling it (``may_wait``)."""

    __slots__ = ("fault", "handler")

    may_wait = True

    def __init__(self, handler: Handler, fault: Any) -> None:
        self.handler = handler
        self.fault = fault

    async def __call__(self, ctx: RequestContext, request: DecodedRequest) -> Any:
        fault = self.fault
        if fault.drop == "before":
            raise FaultClose(False)
        if fault.stall:
            await trio.sleep_forever()
        if fault.delay_ms:
            await trio.sleep(fault.delay_ms / 1000)
        if fault.error_code is not None:
            # Imported here, the only place that answers with it: half a millisecond of the
            # time to the first ApiVersions otherwise.
            from wire.error_response import error_response

            body: Any = error_response(request, fault.error_code)
        else:
            body = await self.handler(ctx, request)
        if fault.drop == "after":
            raise FaultClose(True, body)
        return body


def handler_for(server: ServerState, request: DecodedRequest) -> Handler | None:
    """The handler that serves ``request``: its route's (None while the handlers load),
    wrapped in the fault that matches it, if any (which consumes one of its hits: call
    once per request)."""
    handler = server.handlers.get(request.api_key)
    if handler is not None:
        handler = under_quotas(server, request.api_key, handler)  # itself without quotas
    faults = server.faults  # None unless a test or the control API injects faults
    if faults and handler is not None:
        fault = faults.match(request, server.identity.node_id)
        if fault is not None:
            return FaultedHandler(handler, fault)
    return handler


class Peer(Protocol):
    """What ``serve_one`` reads of a connection (``connection_socket.Connection``)."""

    connection_id: int
    client_host: str
    last_active: float
    tally: ConnectionTally


class Unanswered(NamedTuple):
    """A request ``serve_one`` did not answer: decoded, its handler looked up (None while
    the handlers load) and, when its route is pipelined, submitted (``pending``: its reply,
    not ready yet or not to be written yet)."""

    request: DecodedRequest
    handler: Handler | None
    pending: Any


def serve_one(
    server: ServerState,
    conn: Peer,
    payload: bytes,
    out: bytearray,
    answer_now: bool,
    debug: bool,
) -> Unanswered | None:
    """Decode ``payload``, look up its handler and, if its route is pipelined, submit it:
    a reply ready at once is encoded into ``out`` when ``answer_now`` (None: answered);
    else the ``Unanswered`` request. ``conn`` is the connection (its id, client host and
    tally). Raises what the decoder raises (``UnsupportedVersion``, ``CorruptFrame``)."""
    request = decode_request(payload)
    api_key = request.api_key
    conn.tally.request(api_key, request.client_id, conn.last_active)
    if debug:
        log.debug("connection %d: %s v%d correlation id %d", conn.connection_id,
                  request.spec.name, request.api_version, request.correlation_id)
    handler = handler_for(server, request)
    submit = getattr(handler, "submit", None)
    if submit is None or api_key not in server.traits.pipelined:
        return Unanswered(request, handler, None)
    ctx = _new(RequestContext, (server, conn.connection_id, conn.client_host,
                                request.client_id, request.api_version, request.correlation_id))
    pending = submit(ctx, request)
    if answer_now and getattr(pending, "inline", False):  # a ReadyReply (the usual case)
        body = pending.response
    elif pending is None or not answer_now or not pending.ready():
        if pending is not None and api_key in RENEWING_API_KEYS:  # its answer, once collected
            pending.then(conn.tally.on_answer(api_key, request.body))
        return Unanswered(request, handler, pending)
    else:
        body = pending.result()
    if body is not None:
        if api_key in RENEWING_API_KEYS:  # (the connection's task records what it awaits)
            conn.tally.answered(api_key, request.body, body, conn.last_active)
        out += encode_response(api_key, request.api_version, request.correlation_id, body)
    return None
