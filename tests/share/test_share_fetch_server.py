"""ShareFetch and ShareAcknowledge over real TCP against an in-process server (raw frames,
Trio's autojump clock: lock expiry and long polls run in virtual time)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trio
from share_server import start_share_server
from share_wire import (
    ACCEPT,
    REJECT,
    RELEASE,
    SHARE_ACKNOWLEDGE,
    SHARE_VERSION,
    AsyncClient,
    ack_body,
    acquired,
    values_by_offset,
)

from coordinator.server.app import RunningServer
from wire.constants import ErrorCode

GROUP = "queue"
M1, M2 = "member-one", "member-two"
V = SHARE_VERSION


class Broker:
    """A running server, a connection per member, and the topic ``t``'s id."""

    def __init__(self, running: RunningServer, nursery: trio.Nursery) -> None:
        self.running = running
        self.nursery = nursery
        topic = running.server.topics.get("t")
        assert topic is not None
        self.topic_id: uuid.UUID = topic.topic_id
        self.clients: dict[str, AsyncClient] = {}
        self.epochs: dict[str, int] = {}

    async def client(self, name: str) -> AsyncClient:
        if name not in self.clients:
            self.clients[name] = await AsyncClient.connect(self.running.port)
        return self.clients[name]

    async def produce(self, *values: bytes, partition: int = 0) -> None:
        answer = await (await self.client("producer")).produce("t", partition, values)
        assert answer.responses[0].partition_responses[0].error_code == 0

    async def fetch(self, member: str, epoch: int | None = None, **kwargs: Any) -> Any:
        """A ShareFetch at the member's next epoch (0 the first time)."""
        epoch = self.epochs.get(member, 0) if epoch is None else epoch
        answer = await (await self.client(member)).share_fetch(
            GROUP, member, epoch, self.topic_id, **kwargs)
        if answer.error_code == 0 and epoch >= 0:
            self.epochs[member] = epoch + 1
        return answer

    async def acknowledge(self, member: str, acks: Any, epoch: int | None = None) -> Any:
        epoch = self.epochs[member] if epoch is None else epoch
        answer = await (await self.client(member)).share_acknowledge(
            GROUP, member, epoch, self.topic_id, acks)
        if answer.error_code == 0 and epoch > 0:
            self.epochs[member] = epoch + 1
        return answer


async def _broker(nursery: trio.Nursery, props: dict[str, str] | None = None,
                  reset: str | None = "earliest") -> Broker:
    running, _ = await start_share_server(nursery, (("t", 2),), props, reset)
    return Broker(running, nursery)


MakeBroker = Callable[..., Awaitable[Broker]]


@pytest.fixture
async def make_broker(nursery: trio.Nursery) -> AsyncIterator[MakeBroker]:
    """``await make_broker(props, reset=...)``: a Broker whose connections close at teardown."""
    made: list[Broker] = []

    async def make(props: dict[str, str] | None = None, reset: str | None = "earliest") -> Broker:
        made.append(await _broker(nursery, props, reset))
        return made[-1]

    yield make
    for broker in made:
        for client in broker.clients.values():
            await trio.aclose_forcefully(client.stream)


@pytest.fixture
async def broker(make_broker: MakeBroker) -> Broker:
    return await make_broker()


def _ack_code(answer: Any, partition: int = 0) -> int:
    for topic in answer.responses:
        for p in topic.partitions:
            if p.partition_index == partition:
                return int(p.acknowledge_error_code if hasattr(p, "acknowledge_error_code")
                           else p.error_code)
    raise AssertionError(f"partition {partition} not in {answer}")


async def test_share_fetch_returns_acquired_records_read_from_the_log(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(*[b"a%d" % i for i in range(5)])
    await broker.produce(*[b"b%d" % i for i in range(5)])
    answer = await broker.fetch(M1)
    assert answer.error_code == 0
    assert answer.acquisition_lock_timeout_ms == 30_000
    assert acquired(answer) == [(0, 9, 1)]
    values = values_by_offset(answer)
    assert values == {i: (b"a%d" % i if i < 5 else b"b%d" % (i - 5)) for i in range(10)}


async def test_max_records_and_batch_size_bound_the_acquisition(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(*[b"%d" % i for i in range(10)])
    answer = await broker.fetch(M1, max_records=7, batch_size=3)
    assert acquired(answer) == [(0, 2, 1), (3, 5, 1), (6, 6, 1)]
    assert sorted(values_by_offset(answer)) == list(range(7))


async def test_latest_is_the_default_reset(make_broker: MakeBroker, autojump_clock: Any) -> None:
    broker = await make_broker(reset="latest")
    await broker.produce(b"old-1", b"old-2")
    assert acquired(await broker.fetch(M1)) == []
    await broker.produce(b"new")
    answer = await broker.fetch(M1)
    assert acquired(answer) == [(2, 2, 1)] and values_by_offset(answer) == {2: b"new"}


async def test_long_poll_is_woken_by_produce(broker: Broker, autojump_clock: Any) -> None:
    first = await broker.fetch(M1)
    assert acquired(first) == []
    started = trio.current_time()
    answers: list[Any] = []

    async def poll() -> None:
        answers.append(await broker.fetch(M1, max_wait_ms=10_000))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.sleep(2)
        assert not answers  # still parked
        await broker.produce(b"x")
    assert acquired(answers[0]) == [(0, 0, 1)]
    assert trio.current_time() - started < 3


async def test_long_poll_times_out_empty(broker: Broker, autojump_clock: Any) -> None:
    await broker.fetch(M1)
    started = trio.current_time()
    answer = await broker.fetch(M1, max_wait_ms=1_500)
    assert answer.error_code == 0 and acquired(answer) == []
    assert 1.5 <= trio.current_time() - started < 2


async def test_each_record_is_held_by_one_member_at_a_time(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(*[b"%d" % i for i in range(10)])
    one = await broker.fetch(M1, max_records=5)
    two = await broker.fetch(M2, max_records=5)
    assert acquired(one) == [(0, 4, 1)] and acquired(two) == [(5, 9, 1)]
    assert acquired(await broker.fetch(M2)) == []  # nothing left to acquire
    # M1: RELEASE 0-1, ACCEPT 2-3, REJECT 4 (ShareAcknowledge).
    answer = await broker.acknowledge(M1, {0: [(0, 1, RELEASE), (2, 3, ACCEPT), (4, 4, REJECT)]})
    assert answer.error_code == 0 and _ack_code(answer) == 0
    # M2 accepts its records in its next fetch and gets the released ones, delivered twice.
    again = await broker.fetch(M2, acks={0: [(5, 9, ACCEPT)]})
    assert _ack_code(again) == 0
    assert acquired(again) == [(0, 1, 2)]
    assert sorted(values_by_offset(again)) == [0, 1]
    await broker.acknowledge(M2, {0: [(0, 1, ACCEPT)]})
    # Nothing comes back: accepted and rejected records are done.
    assert acquired(await broker.fetch(M1, max_wait_ms=500)) == []
    partition = broker.running.server.shares.manager.partitions
    (share,) = partition.values()
    assert share.start_offset == 10


async def test_acknowledging_records_another_member_holds_fails(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a", b"b")
    await broker.fetch(M1)
    await broker.fetch(M2)
    answer = await broker.acknowledge(M2, {0: [(0, 1, ACCEPT)]})
    assert answer.error_code == 0 and _ack_code(answer) == ErrorCode.INVALID_RECORD_STATE


async def test_lock_expiry_redelivers_in_virtual_time(broker: Broker, autojump_clock: Any) -> None:
    await broker.produce(b"a", b"b")
    assert acquired(await broker.fetch(M1)) == [(0, 1, 1)]
    started = trio.current_time()
    answer = await broker.fetch(M2, max_wait_ms=60_000)  # woken when the lock expires
    assert acquired(answer) == [(0, 1, 2)]
    assert 30 <= trio.current_time() - started < 31
    # M1's late acknowledgement finds the records no longer its own.
    late = await broker.acknowledge(M1, {0: [(0, 1, ACCEPT)]})
    assert _ack_code(late) == ErrorCode.INVALID_RECORD_STATE


async def test_delivery_count_limit_archives(make_broker: MakeBroker, autojump_clock: Any) -> None:
    broker = await make_broker({"group.share.delivery.count.limit": "2"})
    await broker.produce(b"poison")
    assert acquired(await broker.fetch(M1)) == [(0, 0, 1)]
    assert acquired(await broker.fetch(M1, acks={0: [(0, 0, RELEASE)]})) == [(0, 0, 2)]
    released = await broker.fetch(M1, acks={0: [(0, 0, RELEASE)]}, max_wait_ms=500)
    assert _ack_code(released) == 0 and acquired(released) == []  # archived at the limit


async def test_session_close_releases_what_the_member_holds(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a", b"b", b"c")
    await broker.fetch(M1)
    closed = await broker.fetch(M1, epoch=-1, partitions=(), acks={0: [(0, 0, ACCEPT)]})
    assert closed.error_code == 0 and _ack_code(closed) == 0
    assert acquired(await broker.fetch(M2)) == [(1, 2, 2)]
    gone = await broker.fetch(M1, epoch=1)
    assert gone.error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


async def test_session_errors_answer_the_whole_request(
    make_broker: MakeBroker, autojump_clock: Any
) -> None:
    broker = await make_broker({"group.share.max.share.sessions": "1"})
    await broker.produce(b"a")
    assert (await broker.fetch(M1, epoch=3)).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    await broker.fetch(M1)
    wrong = await broker.fetch(M1, epoch=7)
    assert wrong.error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH and wrong.responses == []
    full = await broker.fetch(M2)
    assert full.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    with_acks = await broker.fetch(M1, epoch=0, acks={0: [(0, 0, ACCEPT)]})
    assert with_acks.error_code == ErrorCode.INVALID_REQUEST
    opening = await broker.acknowledge(M1, {0: [(0, 0, ACCEPT)]}, epoch=0)
    assert opening.error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH


async def test_unknown_topic_id_is_a_partition_error(broker: Broker, autojump_clock: Any) -> None:
    client = await broker.client(M1)
    answer = await client.share_fetch(GROUP, M1, 0, uuid.uuid4())
    assert answer.error_code == 0
    (topic,) = answer.responses
    assert [p.error_code for p in topic.partitions] == [ErrorCode.UNKNOWN_TOPIC_ID]


async def test_version_2_renew_extends_the_lock(broker: Broker, autojump_clock: Any) -> None:
    await broker.produce(b"a")
    await broker.fetch(M1)
    await trio.sleep(20)
    client = await broker.client(M1)
    body = {**ack_body(GROUP, M1, 1, broker.topic_id, {0: [(0, 0, 4)]}), "is_renew_ack": True}
    answer = await client.request(SHARE_ACKNOWLEDGE, 2, body)
    assert answer.error_code == 0 and answer.acquisition_lock_timeout_ms == 30_000
    await trio.sleep(20)  # 40 s after the acquisition, 20 after the renewal: still held
    assert acquired(await broker.fetch(M2)) == []
    await trio.sleep(11)
    assert acquired(await broker.fetch(M2)) == [(0, 0, 2)]


async def _parked_fetch(broker: Broker, member: str, answers: list[Any],
                        nursery: trio.Nursery) -> None:
    await broker.fetch(member)  # opens the session

    async def poll() -> None:
        answers.append(await broker.fetch(member, max_wait_ms=20_000))

    nursery.start_soon(poll)
    await trio.sleep(1)
    assert not answers  # parked


async def test_acknowledge_completes_delayed_share_fetch_request(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a", b"b")
    await broker.fetch(M1)
    answers: list[Any] = []
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        await _parked_fetch(broker, M2, answers, nursery)
        await broker.acknowledge(M1, {0: [(0, 1, RELEASE)]})
    assert acquired(answers[0]) == [(0, 1, 2)]
    assert trio.current_time() - started < 2


async def test_acknowledge_does_not_complete_delayed_share_fetch_request(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a", b"b")
    await broker.fetch(M1)
    answers: list[Any] = []
    async with trio.open_nursery() as nursery:
        await _parked_fetch(broker, M2, answers, nursery)
        await broker.acknowledge(M1, {0: [(0, 1, ACCEPT)]})
        await trio.sleep(5)
        assert not answers  # accepting makes nothing available
    assert acquired(answers[0]) == []


async def test_release_session_completes_delayed_share_fetch_request(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a")
    await broker.fetch(M1)
    answers: list[Any] = []
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        await _parked_fetch(broker, M2, answers, nursery)
        await broker.fetch(M1, epoch=-1, partitions=())
    assert acquired(answers[0]) == [(0, 0, 2)]
    assert trio.current_time() - started < 2


async def test_release_session_does_not_complete_delayed_share_fetch_request(
    broker: Broker, autojump_clock: Any
) -> None:
    await broker.produce(b"a")
    await broker.fetch(M1, acks=None)
    await broker.acknowledge(M1, {0: [(0, 0, ACCEPT)]})
    answers: list[Any] = []
    async with trio.open_nursery() as nursery:
        await _parked_fetch(broker, M2, answers, nursery)
        await broker.fetch(M1, epoch=-1, partitions=())  # held nothing
        await trio.sleep(5)
        assert not answers
    assert acquired(answers[0]) == []


async def test_a_full_session_cache_drops_sessions_of_closed_connections(
    make_broker: MakeBroker, autojump_clock: Any
) -> None:
    broker = await make_broker({"group.share.max.share.sessions": "1"})
    await broker.produce(b"a", b"b")
    assert acquired(await broker.fetch(M1)) == [(0, 1, 1)]
    started = trio.current_time()
    full = await broker.fetch(M2, max_wait_ms=3_000)
    assert full.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    assert trio.current_time() - started >= 3  # delayed by max_wait_ms, as Kafka does
    await trio.aclose_forcefully(broker.clients.pop(M1).stream)  # M1 goes away
    await trio.sleep(0.1)
    answer = await broker.fetch(M2)
    # M1's session went with its connection, and what it held was released.
    assert answer.error_code == 0 and acquired(answer) == [(0, 1, 2)]


async def test_a_groups_record_lock_duration_is_used(broker: Broker, autojump_clock: Any) -> None:
    group_configs = {"share.record.lock.duration.ms": "5000"}
    broker.running.server.shares.group_config = lambda _group, name: group_configs.get(name)
    await broker.produce(b"a")
    first = await broker.fetch(M1)
    assert first.acquisition_lock_timeout_ms == 5_000 and acquired(first) == [(0, 0, 1)]
    await trio.sleep(4)
    client = await broker.client(M1)
    body = {**ack_body(GROUP, M1, 1, broker.topic_id, {0: [(0, 0, 4)]}), "is_renew_ack": True}
    renewed = await client.request(SHARE_ACKNOWLEDGE, 2, body)  # locked until 9 s
    assert renewed.acquisition_lock_timeout_ms == 5_000
    started = trio.current_time()
    answer = await broker.fetch(M2, max_wait_ms=60_000)
    assert acquired(answer) == [(0, 0, 2)]
    assert 5 <= trio.current_time() - started < 6


async def test_deleting_a_share_group_forgets_its_share_partitions(
    broker: Broker, autojump_clock: Any
) -> None:
    member = "0" * 21 + "1"
    client = await broker.client("heartbeats")

    async def heartbeat(epoch: int) -> Any:
        return await client.request(76, 1, {
            "group_id": GROUP, "member_id": member, "member_epoch": epoch,
            "subscribed_topic_names": ["t"] if epoch == 0 else None})

    joined = await heartbeat(0)
    assert joined.error_code == 0
    await broker.produce(b"a", b"b", b"c")
    await broker.fetch(M1)
    await broker.acknowledge(M1, {0: [(0, 2, ACCEPT)]})
    shares = broker.running.server.shares
    (share,) = shares.manager.partitions.values()
    assert share.start_offset == 3
    assert (await heartbeat(-1)).error_code == 0  # the group is Empty
    deleted = await client.request(42, 2, {"groups_names": [GROUP]})
    assert [r.error_code for r in deleted.results] == [0]
    assert shares.manager.partitions == {}  # as a restart replaying the tombstones has it
    # The group made again starts afresh (earliest here): every record comes again.
    assert acquired(await broker.fetch(M2)) == [(0, 2, 1)]


async def test_share_auto_offset_reset_is_the_groups_config(
    make_broker: MakeBroker, autojump_clock: Any
) -> None:
    broker = await make_broker(reset=None)
    await broker.produce(b"old")
    admin = await broker.client("admin")
    altered = await admin.request(44, 1, {"resources": [{
        "resource_type": 32, "resource_name": GROUP, "configs": [
            {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}],
        "validate_only": False})
    assert [r.error_code for r in altered.responses] == [0]
    assert acquired(await broker.fetch(M1)) == [(0, 0, 1)]  # from the log start


async def test_latest_without_a_group_config(make_broker: MakeBroker, autojump_clock: Any) -> None:
    broker = await make_broker(reset=None)
    await broker.produce(b"old")
    assert acquired(await broker.fetch(M1)) == []
