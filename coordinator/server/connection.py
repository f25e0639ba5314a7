"""One client connection: frames in, handlers in request order, responses out in order.

Like Kafka's network layer, a connection works on one request at a time (Kafka mutes the
channel until the response is sent), so responses leave in request order whatever the
client pipelines (librdkafka does) -- except OffsetCommit and Heartbeat (``pipeline.py``):
they reach the coordinator at once, and while one waits for its append (``--fsync
always``) the next request is read and submitted, so pipelined commits share fsyncs; their
answers are written in request order, each once durable, and any other request waits
until they are written. Responses of requests answered without waiting are
batched into one write while more complete frames are buffered; before a request that may
wait (a parked JoinGroup/SyncGroup, a Fetch long-poll) everything already answered is
written first. Waiting never blocks other connections: each has its own task.

Bad input closes this connection only (Kafka's behaviour): a size prefix outside
``0..socket.request.max.bytes`` (refused before anything is allocated), a frame the codec
rejects, an unknown API key or an unsupported version -- except ApiVersions, which gets
Kafka's UNSUPPORTED_VERSION answer in a v0 body so the client can retry lower.
``connections.max.idle.ms`` closes a connection that sends nothing for that long (a sweep
in ``app.Server``, like Kafka's idle-expiry manager, so the hot path only stamps a time).

Memory: a request being received holds memory from the server's
``queued.max.request.bytes`` pool a step ahead of what was read, and must arrive whole
within a deadline from its first byte (``receiving.py``); an answer being written counts in
the server's answer memory, a Fetch asks for no more than that has free, and an answer its
peer does not read for ``socket.send.timeout.ms`` closes the connection
(``answer_memory.py``).

I/O goes straight to the non-blocking socket and waits with ``trio.lowlevel.wait_readable``
/ ``wait_writable`` only when the kernel has nothing (or no room): one trip through the
event loop per request instead of trio's SocketStream's two. Since a read that finds data
does not yield, a connection that has kept the loop for ``FAIR_SLICE_S`` yields explicitly
before going on (without it, a fast ping-pong client starves the other connections: their
readiness is only seen when the loop polls). Between requests, a connection with nothing
buffered or queued parks in the event loop's ready reactor (``reactor.py``) instead, which
answers its pipelinable requests that complete at once without waking this task, and
hands the connection back here, with its buffered bytes, for anything else.
"""

from __future__ import annotations

import logging
import socket
from functools import partial

import trio

from coordinator.server import loading
from coordinator.server.answer_memory import (
    AnswerLimits,
    AnswerMemory,
    cap_fetch,
)
from coordinator.server.bad_input import BAD_INPUT
from coordinator.server.connection_socket import AnswerUnread, Connection
from coordinator.server.context import RequestContext, ServerState
from coordinator.server.dispatch import (
    FaultClose,
    FaultedHandler,
    Unanswered,
    handler_for,
    serve_one,
)
from coordinator.server.listeners import UNNAMED, ServedListener
from coordinator.server.pipeline import ResponsePipeline
from coordinator.server.reactor import (
    Handback,
    current_reactor,
    serve_ready,
)
from coordinator.server.receiving import (
    FRAME_DEADLINE_S,
    GONE,
    FrameDeadline,
    Receiving,
    parked,
)
from coordinator.server.sasl_gate import (
    EXPIRED,
    REAUTHENTICATE,
    authenticate,
    session_verdict,
)
from coordinator.server.tally import RENEWING_API_KEYS, Tallies
from wire import (
    NEED_DATA,
    ApiKey,
    CorruptFrame,
    FrameReader,
    FrameTooLarge,
    UnsupportedVersion,
    encode_unsupported_api_versions,
)
from wire.fast_codec import decode_request, encode_response

__all__ = ["serve_connection"]

log = logging.getLogger(__name__)

FLUSH_BYTES = 1 << 20


async def serve_connection(
    server: ServerState,
    stream: trio.SocketStream,
    connection_id: int,
    served: ServedListener = UNNAMED,
) -> None:
    """Serve one accepted connection of the listener ``served`` until the peer closes it or
    it misbehaves."""
    try:
        peer_host = str(stream.socket.getpeername()[0])
    except OSError:
        peer_host = "unknown"
    # Take the descriptor over from trio's stream (TCP_NODELAY stays set on it).
    sock = socket.socket(fileno=stream.socket.detach())
    sock.setblocking(False)
    limits: AnswerLimits = getattr(server, "answer_limits", None) or AnswerLimits(
        AnswerMemory(-1))
    tallies: Tallies = getattr(server, "tallies", None) or Tallies()
    if limits.send_buffer_bytes > 0:  # socket.send.buffer.bytes, as Kafka sets it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, limits.send_buffer_bytes)
    tally = tallies.opened(connection_id, trio.current_time())
    if served.tls is None:
        conn = Connection(sock, connection_id, peer_host, limits.memory, limits.send_timeout_s,
                          tally)
    else:  # (the TLS machinery is imported for a TLS listener only)
        from coordinator.server.tls_connection import TlsConnection

        conn = TlsConnection(sock, connection_id, peer_host, served.tls, limits.memory,
                             limits.send_timeout_s, tally)
    conn.listener = served.name
    if served.sasl is not None:  # a SASL listener: authenticate first (``sasl_gate.py``)
        conn.sasl = served.sasl.authenticator()
    server.connections[connection_id] = conn
    log.debug("connection %d from %s opened", connection_id, peer_host)
    try:
        with conn.scope:
            if await conn.handshake():
                await _serve(server, conn)
    except FrameDeadline:
        log.warning("closing connection %d from %s: a request did not arrive whole within %g s",
                    connection_id, peer_host, FRAME_DEADLINE_S)
    except AnswerUnread:
        BAD_INPUT.warn("closing connection %d from %s: it read nothing of its answer for %g s "
                       "(socket.send.timeout.ms)", connection_id, peer_host, conn.send_timeout)
    except OSError as exc:
        log.debug("connection %d from %s broken: %r", connection_id, peer_host, exc)
    finally:
        del server.connections[connection_id]
        sock.close()
        if server.shares is not None:  # its share sessions go (Kafka releases at once)
            server.shares.connection_closed(server.identity.node_id, connection_id)
        tallies.close(conn.tally, trio.current_time())
        if conn.expired:
            log.info(
                "closed connection %d from %s: idle for more than %d ms (connections.max.idle.ms)",
                connection_id,
                peer_host,
                int(server.idle_seconds * 1000),
            )
        else:
            log.debug("connection %d from %s closed", connection_id, peer_host)


async def _serve(server: ServerState, conn: Connection) -> None:
    reader = FrameReader(server.max_request_bytes)
    receiving = conn.receiving = Receiving(getattr(server, "request_memory", None))
    out = bytearray()
    try:
        # A SASL listener's connection authenticates first.
        if conn.sasl is not None and not await authenticate(server, conn, reader, receiving):
            return
        async with trio.open_nursery() as nursery:
            pipeline = ResponsePipeline(conn, nursery)
            await _serve_frames(server, conn, reader, receiving, pipeline, out)
    except BaseExceptionGroup as group:
        # The pipeline's writer handles its own errors: this is the reading side's one
        # (OSError, FrameDeadline), raised as it would be without the nursery.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        receiving.done()


async def _serve_frames(
    server: ServerState,
    conn: Connection,
    reader: FrameReader,
    receiving: Receiving,
    pipeline: ResponsePipeline,
    out: bytearray,
) -> None:
    connection_id = conn.connection_id
    peer_host = conn.peer_host
    debug = log.isEnabledFor(logging.DEBUG)
    # (a SASL session that expires is checked on every request: not in the reactor)
    reactor = current_reactor() if conn.parks_in_reactor and conn.session is None else None
    sock_fd = conn.sock.fileno()
    serve_inline = partial(serve_ready, server, conn, reader, debug)
    handed: Handback | None = None
    while True:
        step: Unanswered | None = None
        try:
            # What the reactor handed over (a request it did not answer, or a frame to
            # decode again), else the next frame.
            if handed is None or (handed.step is None and handed.payload is None):
                payload = reader.next_frame()
            else:
                step, payload = handed.step, handed.payload or b""
            handed = None
            if payload is NEED_DATA:
                if out:
                    await conn.send_all(out)
                    out = bytearray()
                if (reactor is not None and not reader.buffered and not pipeline.active
                        and server.loaded.is_set()):
                    handed = await reactor.park(sock_fd, serve_inline)
                    if handed.unsent:
                        await conn.send_all(handed.unsent)
                    if handed.error is not None:
                        if isinstance(handed.error, OSError):
                            raise handed.error
                        failed = None if handed.step is None else handed.step.request
                        log.error("closing connection %d from %s: %s failed", connection_id,
                                  peer_host, "a request" if failed is None else
                                  f"{failed.spec.name} v{failed.api_version} (correlation id "
                                  f"{failed.correlation_id})", exc_info=handed.error)
                        break
                    if handed.eof:
                        break
                    receiving.received_at = conn.last_active  # what the reactor read
                    continue
                data = await receiving.more(conn, reader)
                if not data:
                    break
                reader.receive_data(data)
                continue
        except FrameTooLarge as exc:
            BAD_INPUT.warn("closing connection %d from %s: %s", connection_id, peer_host, exc)
            break
        if receiving.active:
            receiving.done()

        if conn.session is not None and step is None:  # KIP-368 (``sasl_gate.py``)
            verdict = session_verdict(conn.session, int.from_bytes(payload[:2], "big"))
            if verdict == EXPIRED:
                log.info("closing connection %d from %s: its SASL session expired without "
                         "re-authentication (connections.max.reauth.ms)", connection_id,
                         peer_host)
                break
            if verdict == REAUTHENTICATE:
                if pipeline.active:
                    await pipeline.drained()
                if out:
                    await conn.send_all(out)
                    out = bytearray()
                try:
                    handshake = decode_request(payload)
                except (UnsupportedVersion, CorruptFrame) as exc:
                    BAD_INPUT.warn("closing connection %d from %s: %s", connection_id,
                                   peer_host, exc)
                    break
                conn.sasl = conn.session.authenticator
                if not await authenticate(server, conn, reader, receiving, handshake):
                    break
                continue

        if step is None:
            try:
                step = serve_one(server, conn, payload, out, not pipeline.active, debug)
            except UnsupportedVersion as exc:
                if exc.api_key == ApiKey.API_VERSIONS and exc.correlation_id is not None:
                    if pipeline.active:
                        await pipeline.drained()
                    out += encode_unsupported_api_versions(exc.correlation_id)
                    continue
                BAD_INPUT.warn("closing connection %d from %s: %s", connection_id, peer_host,
                               exc)
                break
            except CorruptFrame as exc:
                BAD_INPUT.warn("closing connection %d from %s: %s", connection_id, peer_host,
                               exc)
                break
            except Exception:
                log.exception("closing connection %d from %s: a request failed",
                              connection_id, peer_host)
                break
            if step is None:  # answered into out
                if len(out) >= FLUSH_BYTES:
                    await conn.send_all(out)
                    out = bytearray()
                else:
                    await conn.maybe_yield()
                continue
        request, handler, pending = step
        api_key = request.api_key
        if pending is not None:  # submitted: its reply waits for the disk or its turn
            if out:
                await conn.send_all(out)
                out = bytearray()
            await pipeline.push(api_key, request.api_version, request.correlation_id, pending)
            continue
        if handler is None and not server.loaded.is_set():
            await loading.wait_for_handler_or_routes(server, api_key)  # the surface's first
            if (api_key not in server.handlers
                    and await server.coordinator_apis.includes(api_key)):  # Kafka's answer
                with trio.move_on_after(loading.LOAD_WAIT_S):
                    await server.loaded.wait()
                if not server.loaded.is_set():
                    if pipeline.active:
                        await pipeline.drained()
                    out += encode_response(api_key, request.api_version, request.correlation_id,
                                           server.coordinator_apis.load_in_progress(request))
                    continue
                handler = handler_for(server, request)
            if handler is None:
                await server.wait_for_handler(api_key)  # startup: loaded in stages
                handler = handler_for(server, request)
        if handler is None:
            BAD_INPUT.warn(
                "closing connection %d from %s: %s (key %d) is not served",
                connection_id,
                peer_host,
                request.spec.name,
                api_key,
            )
            break
        if pipeline.active:
            await pipeline.drained()  # answers in request order; earlier commits applied
        if out and (api_key in server.traits.may_wait or type(handler) is FaultedHandler):
            await conn.send_all(out)  # flush: its handler may wait long
            out = bytearray()
        ctx = RequestContext(
            server,
            connection_id,
            conn.client_host,
            request.client_id,
            request.api_version,
            request.correlation_id,
        )
        try:
            conn.busy = True
            if api_key in server.traits.parks:  # watch for the client leaving meanwhile
                if api_key == ApiKey.FETCH:
                    cap_fetch(conn.answers, request)
                body = await parked(conn, handler, ctx, request)
                if body is GONE:
                    log.debug("connection %d from %s: the client left during a parked %s",
                              connection_id, peer_host, request.spec.name)
                    break
            else:
                body = await handler(ctx, request)
            conn.busy = False
            if body is not None:
                if api_key in RENEWING_API_KEYS:  # (serve_one records what it submitted)
                    conn.tally.answered(api_key, request.body, body, trio.current_time())
                out += encode_response(api_key, request.api_version, request.correlation_id, body)
                body = None  # (a Fetch's records: not held while the answer is written)
                if debug:
                    log.debug(
                        "connection %d: answered %s correlation id %d (%d bytes buffered)",
                        connection_id,
                        request.spec.name,
                        request.correlation_id,
                        len(out),
                    )
        except FaultClose as closing:
            if closing.answered and closing.body is not None:
                out += encode_response(api_key, request.api_version, request.correlation_id,
                                       closing.body)
            if out:
                await conn.send_all(out)
                out = bytearray()
            log.warning("closing connection %d from %s: fault injected", connection_id, peer_host)
            break
        except Exception:
            log.exception(
                "closing connection %d from %s: %s v%d (correlation id %d) failed",
                connection_id,
                peer_host,
                request.spec.name,
                request.api_version,
                request.correlation_id,
            )
            break
        if len(out) >= FLUSH_BYTES:
            await conn.send_all(out)
            out = bytearray()
        else:
            await conn.maybe_yield()
    if pipeline.active:
        await pipeline.drained()
    if out:
        # Answer what was answered before the connection misbehaved (Kafka does too: it
        # processes one request at a time and fails on the next one it reads).
        await conn.send_all(out)
