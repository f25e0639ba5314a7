"""Admin requests are bounded per request (issue 32 item 5): one CreateTopics of 20 topics
x 10,000 partitions froze the server 2.6 s. Kafka's controller refuses more than 10,000
partitions per request with POLICY_VIOLATION for every topic and creates nothing; a request
within the bound gives the event loop back between topics."""

from __future__ import annotations

import uuid
from typing import Any

import trio
from broker_support import FakeState, call

from coordinator.broker.admin_limits import MAX_PARTITIONS_PER_REQUEST
from wire import ErrorCode

ZERO = uuid.UUID(int=0)


def _creatable(name: str, partitions: int) -> dict[str, object]:
    return {"name": name, "num_partitions": partitions, "replication_factor": 1}


async def test_more_partitions_than_one_request_may_create_is_a_policy_violation(
    state: FakeState,
) -> None:
    request = {"topics": [_creatable(f"t{i}", 10_000) for i in range(20)]
               + [_creatable("dup", 1), _creatable("dup", 1)], "timeout_ms": 1000}
    got = await call(state, 19, 7, request)
    assert got is not None
    codes = {t.name: t.error_code for t in got.topics}
    assert codes == {**{f"t{i}": ErrorCode.POLICY_VIOLATION for i in range(20)},
                     "dup": ErrorCode.INVALID_REQUEST}
    message = {t.name: t.error_message for t in got.topics}["t0"]
    assert message == "Excessively large number of partitions per request."
    assert len(state.topics) == 0


async def test_the_default_partition_count_counts_towards_the_bound(state: FakeState) -> None:
    state.config["num.partitions"] = str(MAX_PARTITIONS_PER_REQUEST)
    request = {"topics": [_creatable("a", -1), _creatable("b", 1)], "timeout_ms": 1000}
    got = await call(state, 19, 7, request)
    assert got is not None
    assert [t.error_code for t in got.topics] == [ErrorCode.POLICY_VIOLATION] * 2
    request = {"topics": [_creatable("a", -1), _creatable("b", 0)], "timeout_ms": 1000}
    got = await call(state, 19, 7, request)
    assert got is not None
    assert [t.error_code for t in got.topics] == [0, ErrorCode.INVALID_PARTITIONS]


async def _ticks_during(coro: Any) -> tuple[int, Any]:
    """How many times another task ran while ``coro`` ran."""
    ticks = 0
    result: Any = None
    async with trio.open_nursery() as nursery:
        async def ticker() -> None:
            nonlocal ticks
            while True:
                await trio.lowlevel.checkpoint()
                ticks += 1

        nursery.start_soon(ticker)
        await trio.lowlevel.checkpoint()  # the ticker starts
        before = ticks
        result = await coro
        nursery.cancel_scope.cancel()
    return ticks - before, result


async def test_admin_requests_of_many_topics_yield_to_the_event_loop(state: FakeState) -> None:
    create = {"topics": [_creatable(f"t{i}", 100) for i in range(20)], "timeout_ms": 1000}
    ticks, got = await _ticks_during(call(state, 19, 7, create))
    assert [t.error_code for t in got.topics] == [0] * 20
    assert ticks >= 10  # (no yield: 0 or 1)
    grow = {"topics": [{"name": f"t{i}", "count": 200, "assignments": None}
                       for i in range(20)], "timeout_ms": 1000, "validate_only": False}
    ticks, got = await _ticks_during(call(state, 37, 3, grow))
    assert [r.error_code for r in got.results] == [0] * 20
    assert ticks >= 10  # (no yield: 0 or 1)
    delete = {"topics": [{"name": f"t{i}", "topic_id": ZERO} for i in range(20)],
              "timeout_ms": 1000}
    ticks, got = await _ticks_during(call(state, 20, 6, delete))
    assert [r.error_code for r in got.responses] == [0] * 20
    assert ticks >= 10  # (no yield: 0 or 1)
