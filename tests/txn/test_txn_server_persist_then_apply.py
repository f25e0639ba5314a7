"""Persist, then apply, over TCP: when the log refuses a transaction record, the client
hears Kafka's NOT_COORDINATOR, DescribeTransactions shows the state the log holds, and a
restart on the same log rebuilds exactly the live state."""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
import trio
from raw_client import RawClient, TxnClient

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.sink import MemorySink
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS, REMOVE_EXPIRED_TRANSACTIONAL_IDS
from storage.records import Record, TransactionStateKey, TransactionStateValue
from wire import ErrorCode

DESCRIBE_TRANSACTIONS = 65


def fail_transaction_records(records: Sequence[Record]) -> OSError | None:
    """The sink's fault: a disk error for any append holding a transaction record."""
    if any(isinstance(r.key, TransactionStateKey) for r in records):
        return OSError(errno.EIO, "disk gone")
    return None


def fail_status(status: int) -> Callable[[Sequence[Record]], OSError | None]:
    """The sink's fault: a disk error for any append holding a transaction state record
    with this ``transaction_status`` (4: CompleteCommit)."""

    def fault(records: Sequence[Record]) -> OSError | None:
        for r in records:
            if isinstance(r.value, TransactionStateValue) and r.value.transaction_status == status:
                return OSError(errno.EIO, "disk gone")
        return None

    return fault


async def start(
    nursery: trio.Nursery, sink: MemorySink, props: dict[str, str] | None = None
) -> RunningServer:
    options = build_options(props or {}, host="127.0.0.1", port=0, data_dir=None,
                            topics=(("t", 2),), sink=sink)
    running: RunningServer = await nursery.start(serve, options)
    return running


@pytest.fixture
async def clients() -> AsyncIterator[list[RawClient]]:
    opened: list[RawClient] = []
    yield opened
    for client in opened:
        await trio.aclose_forcefully(client.stream)


async def serving(
    nursery: trio.Nursery, sink: MemorySink, clients: list[RawClient],
    props: dict[str, str] | None = None,
) -> tuple[RunningServer, RawClient]:
    """A server on ``sink`` and a client connected to it."""
    running = await start(nursery, sink, props)
    client = await RawClient.connect(running.port)
    clients.append(client)
    return running, client


async def initialised(client: RawClient) -> TxnClient:
    """Transactional producer ``tx-a`` with its producer id and epoch."""
    producer = TxnClient(client, "tx-a")
    assert (await producer.init()).error_code == 0
    return producer


async def describe(client: RawClient, txn_id: str) -> tuple[Any, ...]:
    answer = await client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [txn_id]})
    (state,) = answer.transaction_states
    partitions = sorted((t.topic, p) for t in state.topics for p in t.partitions)
    return (state.error_code, state.transaction_state, state.producer_id, state.producer_epoch,
            tuple(partitions))


async def test_a_refused_add_partitions_answers_not_coordinator_and_changes_nothing(
    clients: list[RawClient],
) -> None:
    sink = MemorySink()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            _, client = await serving(nursery, sink, clients)
            producer = await initialised(client)
            before = await describe(client, "tx-a")
            assert before[1] == "Empty"

            sink.fail_with = fail_transaction_records
            assert await producer.add("t", 0) == {0: ErrorCode.NOT_COORDINATOR}
            sink.fail_with = None
            live = await describe(client, "tx-a")
            assert live == before  # not Ongoing: the record never reached the log

            assert await producer.add("t", 1) == {1: ErrorCode.NONE}
            live = await describe(client, "tx-a")
            assert live[1:] == ("Ongoing", before[2], before[3], (("t", 1),))
            nursery.cancel_scope.cancel()

        async with trio.open_nursery() as nursery:  # a restart on the same log
            _, client = await serving(nursery, sink, clients)
            assert await describe(client, "tx-a") == live
            nursery.cancel_scope.cancel()


async def test_a_refused_prepare_commit_answers_not_coordinator_and_the_retry_commits(
    clients: list[RawClient],
) -> None:
    sink = MemorySink()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            _, client = await serving(nursery, sink, clients)
            producer = await initialised(client)
            assert await producer.add("t", 0) == {0: 0}
            assert (await producer.produce("t", 0, b"v")).error_code == 0
            sink.fail_with = fail_status(2)  # PrepareCommit
            assert await producer.end(True) == ErrorCode.NOT_COORDINATOR
            sink.fail_with = None
            assert (await describe(client, "tx-a"))[1] == "Ongoing"
            assert await producer.end(True) == 0
            assert (await describe(client, "tx-a"))[1:] == (
                "CompleteCommit", producer.producer_id, producer.epoch, ())
            nursery.cancel_scope.cancel()


async def test_a_refused_completion_is_completed_by_the_runtimes_next_scan(
    clients: list[RawClient],
) -> None:
    """The CompleteCommit is lost: the commit is decided (PrepareCommit is durable, the
    client hears NONE as from Kafka), the id shows PrepareCommit as the log says, and the
    runtime's one timer loop fires the transaction shard's scan, which writes the markers and
    the completion again."""
    sink = MemorySink()
    props = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "50"}
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            running, client = await serving(nursery, sink, clients, props)
            runtime = running.runtime
            assert runtime.transactions is running.server.transactions.coordinator
            armed = runtime.armed_timers()
            assert {ABORT_TIMED_OUT_TRANSACTIONS, REMOVE_EXPIRED_TRANSACTIONAL_IDS} <= set(armed)
            producer = await initialised(client)
            assert await producer.add("t", 1) == {1: 0}
            sink.fail_with = fail_status(4)  # CompleteCommit
            assert await producer.end(True) == 0
            assert (await describe(client, "tx-a"))[1:] == (
                "PrepareCommit", producer.producer_id, producer.epoch, (("t", 1),))
            sink.fail_with = None
            while (await describe(client, "tx-a"))[1] != "CompleteCommit":
                await trio.sleep(0.02)
            nursery.cancel_scope.cancel()
