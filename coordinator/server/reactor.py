"""The ready reactor: idle connections served from one task, without a task switch each.

A connection between requests (nothing buffered, nothing queued, the server loaded) parks
here instead of in ``trio.lowlevel.wait_readable`` on its own socket: it is registered once
in a level-triggered ``select.epoll`` whose descriptor one task per event loop waits on.
When that wakes, every ready connection is read in turn, and the requests that complete at
once -- the pipelinable ones (their routes' ``pipelined``) whose reply is ready at submit
time -- are decoded, submitted and answered inline (``dispatch.serve_one``, the step the
connection's task takes too), their answers written in one
send per connection. Per request that saves the connection task's wake-up, its
``epoll_ctl`` re-arm and the read that finds nothing after each answer.

Anything else goes back to the connection's own task (``Handback``), in request order:
the answers written so far (or what the socket had no room for), then the first request
the reactor does not answer (already decoded; already submitted when its reply waits for
the disk), or nothing when the bytes buffered are an unfinished frame (the task applies
the frame deadline and the request-memory reservation) or a size prefix out of bounds
(the task closes the connection, as it always did). The end of the stream and socket
errors go back too. The task serves until it is idle again, then parks here again.

Fairness: a connection is served for one ``FAIR_SLICE_S`` at most per turn (after its
answers are sent it is read again at once while the slice lasts: a ping-pong client has
often answered by then), and the reactor waits on the event loop between turns, like any
other task. Order across connections: once a request is handed to its task, the turn
ends and the reactor lets that task run before it reads anything more, so a request
that arrived later on another connection does not overtake it; the next turn goes on
down the same poll's ready list, so a burst is read in the order it arrived.

A connection whose task is busy with a parked request (a JoinGroup waiting on its
rebalance) is watched here too (``watch``): its peer closing cancels the wait.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import select
import socket
import sys
import termios
from collections.abc import Callable
from typing import Any, Protocol

import outcome
import trio

from coordinator.server.context import ServerState
from coordinator.server.dispatch import Unanswered, serve_one
from coordinator.server.receive_buffer import FAIR_SLICE_S, receive_view
from coordinator.server.tally import ConnectionTally
from wire import NEED_DATA, CorruptFrame, FrameReader, FrameTooLarge, UnsupportedVersion


class Connection(Protocol):
    """The connection side the reactor reads, answers and stamps
    (``connection_socket.Connection``)."""

    sock: socket.socket
    connection_id: int
    client_host: str
    last_active: float
    last_yield: float
    tally: ConnectionTally

__all__ = ["Handback", "Reactor", "current_reactor", "serve_ready"]

log = logging.getLogger(__name__)

_UNREAD = bytes(4)  # FIONREAD's int


class Handback:
    """What the reactor hands a connection's task: bytes still to write first, then one
    of: a request ``serve_one`` did not answer (``step``: decoded, looked up, submitted when
    pipelinable), a frame to decode again (``payload``: the decoder refused it), an error
    to close with, the end of the stream, or nothing (go on reading in the task)."""

    __slots__ = ("eof", "error", "payload", "step", "unsent")

    def __init__(self, unsent: bytearray | None = None) -> None:
        self.unsent = unsent
        self.payload: bytes | None = None
        self.step: Unanswered | None = None
        self.error: BaseException | None = None
        self.eof = False


#: Serves one ready connection inline: None to keep it parked, a Handback to wake its task.
ServeReady = Callable[[float], "Handback | None"]


class Reactor:
    """Parked connections of one event loop and the task that serves them."""

    __slots__ = ("_epoll", "_parked", "served")

    def __init__(self) -> None:
        self._epoll = select.epoll()
        #: Each registered descriptor's serve step and the task it hands back to (None for
        #: a watch: ``watch``).
        self._parked: dict[int, tuple[ServeReady, trio.lowlevel.Task | None]] = {}
        #: Turns in which the reactor served a connection (diagnostics, tests).
        self.served = 0

    async def park(self, fd: int, serve: ServeReady) -> Handback:
        """Wait until ``serve`` (called when ``fd`` is readable) hands the connection back."""
        self._parked[fd] = (serve, trio.lowlevel.current_task())
        self._epoll.register(fd, select.EPOLLIN)

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._forget(fd)
            return trio.lowlevel.Abort.SUCCEEDED

        back: Handback = await trio.lowlevel.wait_task_rescheduled(abort)
        return back

    def watch(self, sock: socket.socket, peer_left: Callable[[], None]) -> None:
        """Call ``peer_left`` if the peer of ``sock`` (whose task is busy with a parked
        request) closes the connection; stop watching at its first bytes (a pipelined
        request) or at ``unwatch``. One epoll registration instead of a watching task (a
        nursery, a task and Trio's registration and cancellation: about 100 us a request,
        a JoinGroup's and a SyncGroup's each in a burst)."""
        fd = sock.fileno()

        def readable(now: float) -> Handback | None:
            try:
                gone = not sock.recv(1, socket.MSG_PEEK)
            except BlockingIOError:
                return None  # nothing after all: keep watching
            except OSError:
                gone = True
            self._forget(fd)
            if gone:
                peer_left()
            return None

        self._parked[fd] = (readable, None)
        self._epoll.register(fd, select.EPOLLIN)

    def unwatch(self, sock: socket.socket) -> None:
        """Stop watching ``sock`` (``watch``)."""
        self._forget(sock.fileno())

    def _forget(self, fd: int) -> None:
        if self._parked.pop(fd, None) is not None:
            with contextlib.suppress(OSError):
                self._epoll.unregister(fd)

    async def run(self) -> None:
        """Serve parked connections as they become readable (until cancelled)."""
        epoll = self._epoll
        parked = self._parked
        ready: list[tuple[int, int]] = []
        at = 0  # the next of ``ready`` to serve
        try:
            while True:
                # (Also between turns of one poll's list: a task handed a request runs
                # before the reactor reads on -- Trio may run the reactor first in the batch
                # after the checkpoint below, and the wait puts it behind that batch.)
                await trio.lowlevel.wait_readable(epoll.fileno())
                if at == len(ready):
                    ready, at = epoll.poll(0), 0
                now = trio.current_time()
                handed_request = False
                while at < len(ready):
                    fd = ready[at][0]
                    at += 1
                    entry = parked.get(fd)
                    if entry is None:
                        continue
                    serve, task = entry
                    self.served += 1
                    try:
                        back = serve(now)
                    except Exception as exc:  # a bug in serving: that connection closes
                        back = Handback()
                        back.error = exc
                    if back is not None:
                        assert task is not None  # (a watch hands nothing back)
                        self._forget(fd)
                        trio.lowlevel.reschedule(task, outcome.Value(back))
                        if back.step is not None or back.payload is not None:
                            handed_request = True
                            break
                if handed_request:
                    # A request went to its task: let it reach the coordinator before any
                    # request read after it. The rest of this poll's ready connections are
                    # served next, in the kernel's order, before the epoll is asked again:
                    # asking again after every handed request would cost a poll of every
                    # ready descriptor per request, and a level-triggered epoll lists those
                    # it reported last behind the others, so a burst of requests (10,000
                    # JoinGroups) would be read in a stride through the ready list rather
                    # than in the order they arrived (a group's members seconds apart).
                    await trio.lowlevel.checkpoint()
        finally:
            epoll.close()


_REACTOR: trio.lowlevel.RunVar[Reactor | None] = trio.lowlevel.RunVar("kcoord_reactor")


def current_reactor() -> Reactor | None:
    """This event loop's reactor, started on first use (None where there is no epoll)."""
    try:
        return _REACTOR.get()
    except LookupError:
        pass
    reactor: Reactor | None = None
    if hasattr(select, "epoll"):
        reactor = Reactor()
        trio.lowlevel.spawn_system_task(reactor.run, name="kcoord connection reactor")
    _REACTOR.set(reactor)
    return reactor


def _failed(error: BaseException) -> Handback:
    back = Handback()
    back.error = error
    return back


def _unread_bytes(sock: socket.socket) -> int:
    """Bytes the kernel holds for ``sock`` to read (FIONREAD; 0 also at the end of the
    stream, which the level-triggered epoll then reports as readable)."""
    try:
        count = fcntl.ioctl(sock.fileno(), termios.FIONREAD, _UNREAD)
    except (OSError, ValueError):  # (ValueError: a closed socket's descriptor is -1)
        return 1  # let the read find out what is wrong
    return int.from_bytes(count, sys.byteorder, signed=True)


def serve_ready(
    server: ServerState, conn: Connection, reader: FrameReader, debug: bool, now: float
) -> Handback | None:
    """Read what the peer of a parked connection sent and answer the requests that complete
    at once; None to keep it parked, else what its task must do next (``Handback``)."""
    sock = conn.sock
    view = receive_view()
    began = now
    while True:
        try:
            size = sock.recv_into(view)
        except BlockingIOError:
            return None
        except OSError as exc:
            return _failed(exc)
        if not size:
            end = Handback()
            end.eof = True
            return end
        conn.last_active = conn.last_yield = now
        conn.tally.bytes_in += size
        reader.receive_data(view[:size].tobytes())
        out = bytearray()
        back = _answer_buffered(server, conn, reader, debug, out)
        if out:
            try:
                sent = sock.send(out)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                return _failed(exc)
            if sent < len(out):
                if back is None:
                    back = Handback()
                back.unsent = out[sent:]
        if back is not None:
            return back
        # Read again at once if the peer has sent more already (a pipelining client often
        # has), which saves a turn through the event loop -- for one slice at most. FIONREAD
        # asks without a read that fails: an empty read raises BlockingIOError, about 3 us
        # against 0.7, and after one answer the socket is empty nine times in ten.
        now = trio.current_time()
        if now - began >= FAIR_SLICE_S or not _unread_bytes(sock):
            return None


def _answer_buffered(
    server: ServerState, conn: Connection, reader: FrameReader, debug: bool, out: bytearray
) -> Handback | None:
    """Answer the buffered frames that complete at once into ``out`` (``serve_one``); the
    Handback of the first that does not (None when every whole frame was answered and
    nothing is left)."""
    while True:
        try:
            payload = reader.next_frame()
        except FrameTooLarge:
            return Handback()  # the task reads the prefix again and closes the connection
        if payload is NEED_DATA:
            # An unfinished frame: its deadline and its memory reservation are the task's.
            return Handback() if reader.buffered else None
        try:
            step = serve_one(server, conn, payload, out, True, debug)
        except (UnsupportedVersion, CorruptFrame):
            back = Handback()
            back.payload = payload  # the task decodes it again and answers or closes
            return back
        except Exception as exc:  # a bug in serving: that connection closes
            return _failed(exc)
        if step is not None:
            back = Handback()
            back.step = step  # the task finishes it (a pending reply: queued, in order)
            return back
