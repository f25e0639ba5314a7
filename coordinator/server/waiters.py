"""What waits on the coordinator runtime: a submitted request's pending reply, a reply
answered inline (``ReadyReply``), and the runtime's own end (``RuntimeClosed``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:  # (types only: the connections import this before the core is needed)
    from coordinator.core.result import ReplyToken, ShardResponse

__all__ = ["PendingReply", "ReadyReply", "RuntimeClosed"]


class RuntimeClosed(Exception):
    """The runtime stopped before the request could be answered."""


class PendingReply:
    """A submitted request's reply: ``ready`` once the runtime delivered it (after its
    records are durable), ``wait`` for it otherwise. Lets a connection submit pipelined
    requests in order and collect their answers later (``CoordinatorRuntime.submit``)."""

    __slots__ = ("_finish", "_waiters", "event", "response", "token")

    inline = False  # (a ReadyReply's is True)

    def __init__(self, token: ReplyToken, waiters: dict[ReplyToken, PendingReply]) -> None:
        self.token = token
        self._waiters = waiters
        self._finish: Callable[[Any], Any] | None = None
        self.event: trio.Event | None = None
        self.response: ShardResponse | None = None

    @classmethod
    def answered(cls, response: Any) -> PendingReply:
        """A reply that needed no coordinator (the broker's own answer, a wire dict)."""
        pending = cls(0, {})
        pending.response = response
        return pending

    def ready(self) -> bool:
        """Whether the reply was delivered."""
        return self.response is not None

    def result(self) -> Any:
        """The delivered reply (mapped by ``then``); only once ``ready``."""
        self._waiters.pop(self.token, None)
        response = self.response
        return response if self._finish is None else self._finish(response)

    async def wait(self) -> Any:
        """The reply, once delivered; RuntimeClosed if the runtime stopped first."""
        if self.response is None:
            self.event = trio.Event()
            try:
                await self.event.wait()
            finally:
                if self.response is None:
                    self._waiters.pop(self.token, None)
            if self.response is None:
                raise RuntimeClosed("the coordinator runtime has stopped")
        return self.result()

    def discard(self) -> None:
        """Nobody will collect the reply (the connection went away)."""
        self._waiters.pop(self.token, None)

    def then(self, finish: Callable[[Any], Any]) -> PendingReply:
        """This reply, passed through ``finish`` when collected."""
        previous = self._finish
        self._finish = finish if previous is None else (lambda r: finish(previous(r)))
        return self


class ReadyReply:
    """A reply ready at once, without the runtime's bookkeeping (an ``at_once`` Result the
    runtime answered inline): read as a ``PendingReply`` is."""

    __slots__ = ("response",)

    #: Answered at once: ``response`` is the answer (``dispatch.serve_one`` reads it so,
    #: without importing this module before the first request).
    inline = True

    def __init__(self, response: Any) -> None:
        self.response = response

    def ready(self) -> bool:
        """Always: it was answered before it was returned."""
        return True

    def result(self) -> Any:
        """The answer."""
        return self.response

    async def wait(self) -> Any:
        """The answer (no wait)."""
        return self.response

    def discard(self) -> None:
        """Nothing to release."""

    def then(self, finish: Callable[[Any], Any]) -> ReadyReply:
        """This reply, passed through ``finish`` (at once: it is here)."""
        self.response = finish(self.response)
        return self
