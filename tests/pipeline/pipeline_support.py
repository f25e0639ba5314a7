"""Helpers shared by the pipeline tests: logs with known content and the replay oracle."""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from typing import Any

from coordinator.core.store import HardState
from storage.log import Log
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)
from wire.consumer_protocol_schema import encode_assignment, encode_subscription

T0 = 1_700_000_000_000
#: Why a pipeline test is skipped: pyspark, pyarrow or matplotlib is not installed.
NEEDS_EXTRA = "needs the pipeline extra (pip install -e '.[pipeline-test]')"


def topic_batch(timestamps: list[int]) -> bytes:
    """A v2 record batch of a topic (kafka-python's builder), one record per timestamp."""
    with warnings.catch_warnings():  # kafka-python 3.0 uses importlib.resources.read_text
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )
    for i, ts in enumerate(timestamps):
        builder.append(i, timestamp=ts, key=None, value=b"v%d" % i, headers=[])
    return bytes(builder.build())


def assignment(*pairs: tuple[str, list[int]]) -> bytes:
    return encode_assignment(
        0,
        {
            "assigned_partitions": [{"topic": t, "partitions": ps} for t, ps in pairs],
            "user_data": None,
        },
    )


def member(member_id: str, assigned: bytes, instance: str | None = None) -> MemberMetadata:
    return MemberMetadata(
        member_id=member_id,
        group_instance_id=instance,
        client_id=f"client-{member_id}",
        client_host="/127.0.0.1",
        rebalance_timeout=30000,
        session_timeout=10000,
        subscription=encode_subscription(0, {"topics": ["t"], "user_data": None}),
        assignment=assigned,
    )


def commit(
    group: str,
    topic: str,
    partition: int,
    offset: int,
    ts: int,
    expire: int = -1,
    metadata: str = "",
) -> Record:
    return Record(
        OffsetCommitKey(group, topic, partition),
        OffsetCommitValue(offset, 7, metadata, ts, expire),
    )


def event(
    group: str,
    name: str,
    ts: int,
    generation: int,
    *,
    reason: str = "",
    member_id: str = "",
    members: tuple[str, ...] = (),
) -> Record:
    return Record(
        RebalanceEventKey(group),
        RebalanceEventValue(name, ts, generation, member_id, None, reason, members),
    )


def mixed_records() -> list[Record]:
    """Every record type and value shape the parser must handle."""
    gm = GroupMetadataValue(
        protocol_type="consumer",
        generation=1,
        protocol="range",
        leader="m1",
        current_state_timestamp=T0 + 10,
        members=(
            member("m1", assignment(("t", [0, 1]))),
            member("m2", assignment(("t", [2])), "inst-2"),
        ),
    )
    connect = GroupMetadataValue(
        protocol_type="connect",
        generation=4,
        protocol="sessioned",
        leader="w1",
        current_state_timestamp=T0 + 20,
        members=(member("w1", b"\x00\x01not-a-consumer-assignment"),),
    )
    return [
        event("g", "member_join", T0, 0, member_id="m1"),
        event("g", "rebalance_start", T0 + 1, 0, reason="member join"),
        event("g", "rebalance_end", T0 + 5, 1, members=("m1", "m2")),
        Record(GroupMetadataKey("g"), gm),
        commit("g", "t", 0, 10, T0 + 100),
        commit("g", "t", 1, 20, T0 + 101, expire=T0 + 86_400_000),  # value version 1
        commit("g", "t", 0, 15, T0 + 102, metadata="meta ✓"),
        Record(OffsetCommitKey("g", "t", 1), None),
        Record(GroupMetadataKey("c"), connect),
        commit("g", "u", 3, 1, T0 + 200),
        Record(GroupMetadataKey("gone"), None),
    ]


def write(
    data_dir: str, records: list[Record], segment_bytes: int = 1 << 20, batch: int = 1
) -> None:
    with Log.open(data_dir, fsync="never", segment_bytes=segment_bytes) as log:
        for i in range(0, len(records), batch):
            log.append(records[i : i + batch])


def replay_offsets(data_dirs: list[str]) -> dict[tuple[str, str, str, int], int]:
    """The oracle: each directory replayed by the storage log into the coordinator's hard
    state (last write wins, tombstones delete); (data_dir, group, topic, partition) ->
    offset. Replays a copy, so the input (torn tail and all) stays untouched."""
    out: dict[tuple[str, str, str, int], int] = {}
    for d in data_dirs:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "copy")
            shutil.copytree(d, copy, ignore=shutil.ignore_patterns(".lock"))
            state = HardState()
            with Log.open(copy, fsync="never") as log:
                for record in log.replay():
                    state.apply(record)
        for group, offsets in state.offsets.items():
            for (topic, partition), value in offsets.items():
                out[(os.path.abspath(d), group, topic, partition)] = value.offset
    return out


def offsets_from_rows(rows: list[Any]) -> dict[tuple[str, str, str, int], int]:
    return {(r["data_dir"], r["group"], r["topic"], r["partition"]): r["offset"] for r in rows}
