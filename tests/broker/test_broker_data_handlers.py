"""Produce, Fetch and ListOffsets handlers, every version each serves, through the real
codec (and kio where it knows the version); the Fetch long-poll on Trio's mock clock."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import trio
import trio.testing
from broker_support import VERSIONS, FakeState, call, make_batch, read_records

from coordinator.broker.topics import Topic
from wire import ErrorCode

# -- Produce -----------------------------------------------------------------------------


def _produce_request(
    version: int,
    topic: Topic | str,
    partitions: dict[int, bytes | None],
    acks: int = -1,
    transactional_id: str | None = None,
) -> dict[str, Any]:
    if isinstance(topic, Topic):
        key: dict[str, Any] = (
            {"topic_id": topic.topic_id} if version >= 13 else {"name": topic.name}
        )
    else:
        key = {"topic_id": uuid.uuid4()} if version >= 13 else {"name": topic}
    return {
        "transactional_id": transactional_id,
        "acks": acks,
        "timeout_ms": 30000,
        "topic_data": [
            {**key, "partition_data": [{"index": i, "records": r} for i, r in partitions.items()]}
        ],
    }


async def produce(state: FakeState, version: int, topic: Topic, index: int, batch: bytes) -> Any:
    got = await call(state, 0, version, _produce_request(version, topic, {index: batch}))
    assert got is not None
    return got.responses[0].partition_responses[0]


@pytest.mark.parametrize("version", VERSIONS[0])
async def test_produce_assigns_offsets(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 2)
    first = await produce(state, version, topic, 0, make_batch([b"a", b"b"]))
    second = await produce(state, version, topic, 0, make_batch([b"c"]))
    other = await produce(state, version, topic, 1, make_batch([b"x"]))
    assert [(r.index, r.error_code, r.base_offset) for r in (first, second, other)] == [
        (0, 0, 0),
        (0, 0, 2),
        (1, 0, 0),
    ]
    assert first.log_append_time_ms == -1
    if version >= 5:
        assert first.log_start_offset == 0
    log = state.topics.partition("t", 0)
    assert log is not None and log.high_watermark == 3


@pytest.mark.parametrize("version", VERSIONS[0])
async def test_produce_with_acks_zero_sends_no_response(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    request = _produce_request(version, topic, {0: make_batch([b"a"])}, acks=0)
    assert await call(state, 0, version, request) is None
    log = state.topics.partition("t", 0)
    assert log is not None and log.high_watermark == 1


@pytest.mark.parametrize("version", VERSIONS[0])
async def test_produce_errors_per_partition(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 3)
    state.config["message.max.bytes"] = "500"
    corrupt = bytearray(make_batch([b"a"]))
    corrupt[-1] ^= 1
    partitions: dict[int, bytes | None] = {
        0: make_batch([b"ok"]),
        1: bytes(corrupt),
        2: make_batch([b"x" * 600]),
        7: make_batch([b"a"]),
    }
    got = await call(state, 0, version, _produce_request(version, topic, partitions))
    assert got is not None
    results = got.responses[0].partition_responses
    assert [(r.index, r.error_code) for r in results] == [
        (0, 0),
        (1, ErrorCode.CORRUPT_MESSAGE),
        (2, ErrorCode.MESSAGE_TOO_LARGE),
        (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert [r.base_offset for r in results[1:]] == [-1, -1, -1]
    if version >= 8:
        assert results[0].error_message is None and results[1].error_message


@pytest.mark.parametrize("version", VERSIONS[0])
async def test_produce_to_an_unknown_topic(state: FakeState, version: int) -> None:
    got = await call(state, 0, version, _produce_request(version, "nope", {0: make_batch([b"a"])}))
    assert got is not None
    expected = ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert got.responses[0].partition_responses[0].error_code == expected
    assert len(state.topics) == 0  # Produce never auto-creates


@pytest.mark.parametrize("version", VERSIONS[0])
async def test_produce_refuses_bad_acks_and_transactions(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    batch = make_batch([b"a"])
    got = await call(state, 0, version, _produce_request(version, topic, {0: batch}, acks=2))
    assert got is not None
    assert got.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
    txn = make_batch([b"a"], producer_id=1, producer_epoch=0, base_sequence=0, transactional=True)
    got = await call(state, 0, version, _produce_request(version, topic, {0: txn}))
    assert got is not None
    code = got.responses[0].partition_responses[0].error_code
    assert code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    request = _produce_request(version, topic, {0: txn}, transactional_id="tx")
    got = await call(state, 0, version, request)
    assert got is not None
    assert got.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_TXN_STATE
    log = state.topics.partition("t", 0)
    assert log is not None and log.high_watermark == 0


async def test_produce_retries_of_idempotent_batches_are_not_duplicated(state: FakeState) -> None:
    topic = state.topics.create_topic("t", 1)
    batch = make_batch([b"a", b"b"], producer_id=3, producer_epoch=0, base_sequence=0)
    assert (await produce(state, 9, topic, 0, batch)).base_offset == 0
    retry = await produce(state, 9, topic, 0, batch)
    assert (retry.error_code, retry.base_offset) == (0, 0)
    gap = make_batch([b"c"], producer_id=3, producer_epoch=0, base_sequence=5)
    assert (await produce(state, 9, topic, 0, gap)).error_code == (
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    )


# -- Fetch -------------------------------------------------------------------------------


def _fetch_request(
    version: int,
    topic: Topic | str,
    partitions: list[tuple[int, int]] | list[tuple[int, int, int]],
    *,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    max_bytes: int = 1 << 20,
    isolation_level: int = 0,
    session_epoch: int = -1,
) -> dict[str, Any]:
    if isinstance(topic, Topic):
        key: dict[str, Any] = (
            {"topic_id": topic.topic_id} if version >= 13 else {"topic": topic.name}
        )
    else:
        key = {"topic_id": uuid.uuid4()} if version >= 13 else {"topic": topic}
    rows = []
    for entry in partitions:
        index, offset = entry[0], entry[1]
        limit = entry[2] if len(entry) == 3 else 1 << 20
        rows.append({"partition": index, "fetch_offset": offset, "partition_max_bytes": limit})
    return {
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation_level,
        "session_id": 0,
        "session_epoch": session_epoch,
        "topics": [{**key, "partitions": rows}],
    }


def _fill(state: FakeState, topic: str = "t") -> list[int]:
    """Three batches in partition 0 (offsets 0-1, 2, 3-5); their sizes."""
    from coordinator.broker.batches import validate_produced_batch

    sizes = []
    for values in ([b"a" * 100, b"b" * 100], [b"c" * 100], [b"d", b"e", b"f"]):
        batch = make_batch(values)
        state.topics.append(topic, 0, batch, validate_produced_batch(batch, 9, 1 << 20))
        sizes.append(len(batch))
    return sizes


@pytest.mark.parametrize("version", VERSIONS[1])
async def test_fetch_reads_records(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 2)
    _fill(state)
    got = await call(state, 1, version, _fetch_request(version, topic, [(0, 2), (1, 0)]))
    assert got is not None
    if version >= 7:
        assert (got.error_code, got.session_id) == (0, 0)
    [answer] = got.responses
    if version >= 13:
        assert answer.topic_id == topic.topic_id
    else:
        assert answer.topic == "t"
    p0, p1 = answer.partitions
    assert [o for o, _, _ in read_records(p0.records)] == [2, 3, 4, 5]
    assert (p0.error_code, p0.high_watermark, p0.last_stable_offset) == (0, 6, 6)
    if version >= 5:
        assert p0.log_start_offset == 0
    assert p0.aborted_transactions is None
    assert (p1.error_code, p1.high_watermark, p1.records) == (0, 0, b"")


@pytest.mark.parametrize("version", VERSIONS[1])
async def test_fetch_errors(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    _fill(state)
    got = await call(state, 1, version, _fetch_request(version, topic, [(0, 7), (0, -1), (4, 0)]))
    assert got is not None
    codes = [(p.error_code, p.high_watermark, p.records) for p in got.responses[0].partitions]
    assert codes == [
        (ErrorCode.OFFSET_OUT_OF_RANGE, -1, b""),
        (ErrorCode.OFFSET_OUT_OF_RANGE, -1, b""),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, b""),
    ]
    got = await call(state, 1, version, _fetch_request(version, "nope", [(0, 0)]))
    assert got is not None
    expected = ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert got.responses[0].partitions[0].error_code == expected


@pytest.mark.parametrize("version", VERSIONS[1])
async def test_fetch_size_limits(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 2)
    sizes = _fill(state)
    # partition_max_bytes below the first batch: it still comes, alone (minOneMessage)
    got = await call(state, 1, version, _fetch_request(version, topic, [(0, 0, 10)]))
    assert got is not None and len(got.responses[0].partitions[0].records) == sizes[0]
    # max_bytes over two partitions: the budget is shared, first partition first
    request = _fetch_request(version, topic, [(0, 0), (0, 3)], max_bytes=sizes[0] + sizes[1])
    got = await call(state, 1, version, request)
    assert got is not None
    first, second = got.responses[0].partitions
    assert len(first.records) == sizes[0] + sizes[1] and second.records == b""
    if version >= 3:
        request = _fetch_request(version, topic, [(0, 0)], max_bytes=sizes[0] + sizes[1] - 1)
        got = await call(state, 1, version, request)
        assert got is not None and len(got.responses[0].partitions[0].records) == sizes[0]


@pytest.mark.parametrize("version", VERSIONS[1])
async def test_fetch_read_committed(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    _fill(state)
    got = await call(state, 1, version, _fetch_request(version, topic, [(0, 0)], isolation_level=1))
    assert got is not None
    [p] = got.responses[0].partitions
    assert p.aborted_transactions == [] and p.last_stable_offset == 6
    assert len(read_records(p.records)) == 6


@pytest.mark.parametrize("version", [v for v in VERSIONS[1] if v >= 7])
async def test_fetch_sessions_are_never_created(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    got = await call(state, 1, version, _fetch_request(version, topic, [(0, 0)], session_epoch=0))
    assert got is not None and (got.error_code, got.session_id) == (0, 0)
    assert got.responses[0].partitions[0].error_code == 0
    request = _fetch_request(version, topic, [(0, 0)], session_epoch=1)
    request["session_id"] = 1234
    got = await call(state, 1, version, request)
    assert got is not None
    assert (got.error_code, got.session_id, got.responses) == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
        0,
        [],
    )


@pytest.mark.parametrize("version", [4, 11, 12, 16, 18])
async def test_fetch_long_poll_is_woken_by_produce(
    state: FakeState, version: int, autojump_clock: trio.testing.MockClock
) -> None:
    topic = state.topics.create_topic("t", 1)
    request = _fetch_request(version, topic, [(0, 0)], max_wait_ms=5000)
    start = trio.current_time()
    answers: list[tuple[float, Any]] = []

    async def fetcher() -> None:
        got = await call(state, 1, version, request)
        answers.append((trio.current_time() - start, got))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fetcher)
        await trio.sleep(1.5)
        assert answers == []
        await produce(state, 9 if version >= 13 else 5, topic, 0, make_batch([b"hello"]))
    [(elapsed, got)] = answers
    assert elapsed == pytest.approx(1.5)
    assert [v for _, _, v in read_records(got.responses[0].partitions[0].records)] == [b"hello"]


@pytest.mark.parametrize("version", [4, 12, 13])
async def test_fetch_long_poll_waits_for_min_bytes_then_times_out(
    state: FakeState, version: int, autojump_clock: trio.testing.MockClock
) -> None:
    topic = state.topics.create_topic("t", 1)
    request = _fetch_request(version, topic, [(0, 0)], max_wait_ms=2000, min_bytes=10_000)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:

        async def small_produce() -> None:
            await trio.sleep(0.5)
            await produce(state, 9, topic, 0, make_batch([b"tiny"]))

        nursery.start_soon(small_produce)
        got = await call(state, 1, version, request)
    assert trio.current_time() - start == pytest.approx(2.0)
    assert got is not None and len(read_records(got.responses[0].partitions[0].records)) == 1


async def test_fetch_answers_at_once_when_data_or_an_error_is_there(
    state: FakeState, autojump_clock: trio.testing.MockClock
) -> None:
    topic = state.topics.create_topic("t", 1)
    _fill(state)
    start = trio.current_time()
    await call(state, 1, 12, _fetch_request(12, topic, [(0, 0)], max_wait_ms=5000))
    await call(state, 1, 12, _fetch_request(12, topic, [(0, 99)], max_wait_ms=5000))
    await call(state, 1, 12, _fetch_request(12, "nope", [(0, 0)], max_wait_ms=5000))
    assert trio.current_time() == start


# -- ListOffsets -------------------------------------------------------------------------


def _list_request(
    version: int, queries: list[tuple[str, int, int]], **extra: Any
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, timestamp in queries:
        topics.setdefault(name, []).append(
            {"partition_index": index, "timestamp": timestamp, "max_num_offsets": 5}
        )
    return {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": n, "partitions": p} for n, p in topics.items()],
        **extra,
    }


@pytest.mark.parametrize("version", VERSIONS[2])
async def test_list_offsets(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 2)
    for values, stamps in (([b"a", b"b"], [100, 900]), ([b"c"], [500])):
        await produce(state, 9, topic, 0, make_batch(values, stamps))
    queries = [
        ("t", 0, -2),
        ("t", 0, -1),
        ("t", 0, -3),
        ("t", 0, 400),
        ("t", 1, -1),
        ("t", 0, 901),
        ("t", 9, -1),
        ("nope", 0, -1),
    ]
    answers = []
    for query in queries:  # one request each: a partition twice in one is INVALID_REQUEST
        got = await call(state, 2, version, _list_request(version, [query]))
        assert got is not None and got.topics[0].name == query[0]
        answers.append(got.topics[0].partitions[0])
    assert [p.error_code for p in answers] == [0, 0, 0 if version >= 7 else 35, 0, 0, 0, 3, 3]
    if version == 0:
        assert [list(p.old_style_offsets) for p in answers[:6]] == [[0], [3, 0], [], [], [0], [0]]
        return
    results = [(p.timestamp, p.offset) for p in answers]
    expected_max = (900, 1) if version >= 7 else (-1, -1)
    assert results[:6] == [(-1, 0), (-1, 3), expected_max, (900, 1), (-1, 0), (-1, -1)]
    if version >= 4:
        # the leader epoch (0 on one broker); an error carries the default -1
        assert [p.leader_epoch for p in answers] == [
            0 if p.error_code == 0 else -1 for p in answers]
        assert [p.leader_epoch for p in answers].count(0) >= 5


@pytest.mark.parametrize("version", [v for v in VERSIONS[2] if v >= 1])
async def test_list_offsets_special_values_by_version(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 4)
    specials = [-4, -5, -6, -7]
    queries = [("t", i, s) for i, s in enumerate(specials)]
    got = await call(state, 2, version, _list_request(version, queries))
    assert got is not None
    codes = [p.error_code for p in got.topics[0].partitions]
    minimum = {-4: 8, -5: 9, -6: 11, -7: 99}
    assert codes == [0 if version >= minimum[s] else 35 for s in specials]


@pytest.mark.parametrize("version", [v for v in VERSIONS[2] if v >= 1])
async def test_list_offsets_refuses_duplicate_partitions(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 1)
    got = await call(state, 2, version, _list_request(version, [("t", 0, -1), ("t", 0, -2)]))
    assert got is not None
    assert [p.error_code for p in got.topics[0].partitions] == [ErrorCode.INVALID_REQUEST]


async def test_list_offsets_isolation_and_replica(state: FakeState) -> None:
    topic = state.topics.create_topic("t", 1)
    await produce(state, 9, topic, 0, make_batch([b"a"]))
    for request in (
        _list_request(7, [("t", 0, -1)], isolation_level=1),
        _list_request(7, [("t", 0, -1)], replica_id=-2),
    ):
        got = await call(state, 2, 7, request)
        assert got is not None and got.topics[0].partitions[0].offset == 1


@pytest.mark.parametrize("version", [12, 13])
async def test_fetch_waiting_on_a_topic_deleted_and_recreated(
    state: FakeState, version: int, autojump_clock: trio.testing.MockClock
) -> None:
    topic = state.topics.create_topic("t", 1)
    request = _fetch_request(version, topic, [(0, 0)], max_wait_ms=5000)

    async def recreate() -> None:
        await trio.sleep(1)
        state.topics.delete_topic("t")
        state.topics.create_topic("t", 1)

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(recreate)
        got = await call(state, 1, version, request)
    assert got is not None
    code = got.responses[0].partitions[0].error_code
    elapsed = trio.current_time() - start
    if version >= 13:  # by id: the old topic is gone, answered at once
        assert elapsed == pytest.approx(1) and code == ErrorCode.UNKNOWN_TOPIC_ID
    else:  # by name: the new, empty topic is waited on like any other
        assert elapsed == pytest.approx(5) and code == ErrorCode.NONE
