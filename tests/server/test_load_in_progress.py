"""While the coordinator loads (the log's replay), the broker answers: Metadata and
FindCoordinator as usual, the coordinator APIs COORDINATOR_LOAD_IN_PROGRESS (Heartbeat
NONE, as Kafka's GroupCoordinatorService "blindly" answers it), and once loaded the same
requests are served -- instead of leaving every request unanswered until then."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from raw_client import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    INIT_PRODUCER_ID,
    JOIN_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    RawClient,
    heartbeat_body,
    join_body,
)

from coordinator.server import loading
from coordinator.server.app import serve
from coordinator.server.options import build_options
from coordinator.server.sink import MemorySink
from storage.records import OffsetCommitKey, OffsetCommitValue, Record
from wire import ErrorCode

METADATA, FIND_COORDINATOR, DELETE_GROUPS, LIST_TRANSACTIONS = 3, 10, 42, 66
SHARE_GROUP_HEARTBEAT, SHARE_GROUP_DESCRIBE = 76, 77
LOADING = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


class HeldReplaySink(MemorySink):
    """A sink whose replay (in the runtime's worker thread) waits for ``release``: a log
    that takes long to load."""

    blocking_replay = True

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        self.release = threading.Event()

    def replay(self) -> Iterator[Record]:
        assert self.release.wait(30), "the test never released the replay"
        return iter(self.records)


def _commit_record() -> Record:
    return Record(OffsetCommitKey("restored", "t", 0), OffsetCommitValue(offset=7))


async def _start(nursery: trio.Nursery, sink: HeldReplaySink) -> int:
    listening: list[int] = []
    bound = trio.Event()

    def on_listening(host: str, port: int, name: str | None) -> None:
        listening.append(port)
        bound.set()

    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=None, topics=(("t", 3),), sink=sink,
                            on_listening=on_listening)
    nursery.start_soon(serve, options)
    await bound.wait()
    return listening[0]


async def _fetch_offset(client: RawClient) -> Any:
    return await client.request(OFFSET_FETCH, 1, {
        "group_id": "restored", "topics": [{"name": "t", "partition_indexes": [0]}]})


async def test_coordinator_apis_answer_load_in_progress_until_loaded(
        nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loading, "LOAD_WAIT_S", 0.05)  # answer at once, not after 2 s
    sink = HeldReplaySink([_commit_record()])
    port = await _start(nursery, sink)
    client = await RawClient.connect(port)
    with trio.fail_after(30):
        # The broker surface is answered while the coordinator loads.
        metadata = await client.request(METADATA, 0, {"topics": []})
        # (with the internal topics, which every all-topics answer lists)
        assert [t.name for t in metadata.topics if not t.name.startswith("__")] == ["t"]
        found = await client.request(FIND_COORDINATOR, 0, {"key": "restored"})
        assert found.error_code == ErrorCode.NONE

        joined = await client.request(JOIN_GROUP, 5, join_body("g"))
        assert (joined.error_code, joined.generation_id) == (LOADING, -1)
        fetched = await _fetch_offset(client)
        assert [p.error_code for t in fetched.topics for p in t.partitions] == [LOADING]
        fetched_v8 = await client.request(OFFSET_FETCH, 8, {"groups": [
            {"group_id": "restored", "topics": None}], "require_stable": False})
        assert [(g.group_id, g.error_code) for g in fetched_v8.groups] == [("restored", LOADING)]
        commit = await client.request(OFFSET_COMMIT, 2, {
            "group_id": "g", "generation_id": -1, "member_id": "", "retention_time_ms": -1,
            "topics": [{"name": "t", "partitions": [
                {"partition_index": 1, "committed_offset": 3, "committed_metadata": ""}]}]})
        assert [p.error_code for t in commit.topics for p in t.partitions] == [LOADING]
        described = await client.request(DESCRIBE_GROUPS, 0, {"groups": ["a", "b"]})
        assert [(g.group_id, g.error_code) for g in described.groups] == [
            ("a", LOADING), ("b", LOADING)]
        deleted = await client.request(DELETE_GROUPS, 0, {"groups_names": ["a"]})
        assert [(r.group_id, r.error_code) for r in deleted.results] == [("a", LOADING)]
        listed = await client.request(LIST_GROUPS, 0, {})
        assert (listed.error_code, list(listed.groups)) == (LOADING, [])
        transactions = await client.request(LIST_TRANSACTIONS, 0, {
            "state_filters": [], "producer_id_filters": []})
        assert transactions.error_code == LOADING
        producer = await client.request(INIT_PRODUCER_ID, 0, {
            "transactional_id": None, "transaction_timeout_ms": 60_000})
        assert (producer.error_code, producer.producer_id) == (LOADING, -1)
        beat = await client.request(HEARTBEAT, 0, heartbeat_body("g", 1, "m"))
        assert beat.error_code == ErrorCode.NONE  # Kafka: "blindly respond" while loading
        # Every route with a routing is a coordinator API, answered as its routing says
        # (read off the routes, not a list): the share group APIs too.
        share = await client.request(SHARE_GROUP_HEARTBEAT, 1, {
            "group_id": "s", "member_id": "m", "member_epoch": 0, "rack_id": None,
            "subscribed_topic_names": ["t"]})
        assert share.error_code == LOADING
        share_described = await client.request(SHARE_GROUP_DESCRIBE, 1, {
            "group_ids": ["s", "u"], "include_authorized_operations": False})
        assert [(g.group_id, g.error_code) for g in share_described.groups] == [
            ("s", LOADING), ("u", LOADING)]

        sink.release.set()
        while (fetched := await _fetch_offset(client)).topics[0].partitions[0].error_code:
            assert fetched.topics[0].partitions[0].error_code == LOADING
            await trio.sleep(0.01)
        assert fetched.topics[0].partitions[0].committed_offset == 7
        joined = await client.request(JOIN_GROUP, 5, join_body("g"))
        assert joined.error_code == ErrorCode.MEMBER_ID_REQUIRED
    await client.aclose()


async def test_a_coordinator_request_waits_out_a_short_load(nursery: trio.Nursery) -> None:
    """A load shorter than ``LOAD_WAIT_S`` is waited out: the request gets its real answer."""
    sink = HeldReplaySink([_commit_record()])
    port = await _start(nursery, sink)
    client = await RawClient.connect(port)

    async def release_soon() -> None:
        await trio.sleep(0.2)
        sink.release.set()

    nursery.start_soon(release_soon)
    with trio.fail_after(30):
        fetched = await _fetch_offset(client)
        assert fetched.topics[0].partitions[0].error_code == ErrorCode.NONE
        assert fetched.topics[0].partitions[0].committed_offset == 7
    await client.aclose()
