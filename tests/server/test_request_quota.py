"""Request quotas enforced over raw frames (issue 30 item 6, Kafka's
``ClientRequestQuotaManager``): a client over its ``request_percentage`` gets
``throttle_time_ms`` on any API's answer and its connection is muted for it; a client
without one is never timed; what counts is the handler's own running time, not its waits."""

from __future__ import annotations

import time
from typing import Any

import pytest
import trio
import trio.testing
from raw_client import jump
from test_quota_throttling import set_quota

from coordinator.server import request_quota
from coordinator.server.request_quota import RequestQuotaHandler, TimedSteps
from wire import ApiKey

_METADATA = {"topics": None, "allow_auto_topic_creation": False,
             "include_topic_authorized_operations": False}


class _MillisecondSteps:
    """A ``time`` whose ``perf_counter_ns`` moves 1 ms per call: each handler step lasts
    exactly 1 ms, so rates and throttle times compare exactly."""

    def __init__(self) -> None:
        self.now = 0

    def perf_counter_ns(self) -> int:
        self.now += 1_000_000
        return self.now


async def test_a_client_over_its_request_percentage_is_throttled_and_muted(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    running = await start_server({})
    client = await connect(running.port)
    await set_quota(client, {"client-id": "raw-client"}, "request_percentage", 0.005)
    monkeypatch.setattr(request_quota, "time", _MillisecondSteps())
    first = await client.request(ApiKey.METADATA, 12, _METADATA)
    # One 1 ms step at one instant: 0.1 percent-seconds over the eleven windows' minimum
    # 10 s span is 0.01 %; throttle = (0.01 - 0.005) / 0.005 * 10 s, capped at one quota
    # window (1 s) as Kafka's ClientRequestQuotaManager caps it.
    assert first.throttle_time_ms == 1_000
    answered: list[Any] = []

    async def ask_again() -> None:
        answered.append(await client.request(ApiKey.DESCRIBE_CLUSTER, 0, {
            "include_cluster_authorized_operations": False}))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask_again)
        await jump(first.throttle_time_ms / 1000 - 0.5)
        assert answered == []  # muted: the next request, of any API, waits
        await jump(0.6)
    assert answered[0].error_code == 0 and answered[0].throttle_time_ms > 0


async def test_a_client_without_a_request_quota_is_not_throttled(
        start_server: Any, connect: Any, mock_clock: trio.testing.MockClock) -> None:
    from coordinator.server.dispatch import handler_for
    from wire import decode_request

    running = await start_server({})
    client = await connect(running.port)
    state = running.server
    payload = client.frame(ApiKey.METADATA, 12, _METADATA)[1][4:]
    await set_quota(client, {"client-id": "someone-else"}, "producer_byte_rate", 1e6)
    # No request quota anywhere: no handler is wrapped (the fast lane serves).
    assert not isinstance(handler_for(state, decode_request(payload)), RequestQuotaHandler)
    await set_quota(client, {"client-id": "someone-else"}, "request_percentage", 1e-6)
    assert isinstance(handler_for(state, decode_request(payload)), RequestQuotaHandler)
    for _ in range(3):  # timed, but no quota applies to this client
        assert (await client.request(ApiKey.METADATA, 12, _METADATA)).throttle_time_ms == 0


async def test_the_handlers_waits_are_not_counted() -> None:
    async def handler() -> str:
        busy_until = time.perf_counter() + 0.02
        while time.perf_counter() < busy_until:  # 20 ms of work
            pass
        await trio.sleep(0.3)  # a wait (a long poll, an fsync in a thread)
        return "answer"

    began = time.perf_counter()
    timed = TimedSteps(handler())
    assert await timed == "answer"
    assert time.perf_counter() - began >= 0.3
    assert 0.02 <= timed.nanos / 1e9 < 0.2


async def test_a_cancelled_handler_is_cancelled_through_the_timing() -> None:
    reached: list[str] = []

    async def handler() -> None:
        try:
            await trio.sleep_forever()
        finally:
            reached.append("cleaned up")

    with trio.move_on_after(0.05) as scope:
        await TimedSteps(handler())
    assert scope.cancelled_caught and reached == ["cleaned up"]
    with pytest.raises(ValueError, match="bad"):
        await TimedSteps(_raises())


async def _raises() -> None:
    await trio.sleep(0)
    raise ValueError("bad")
