"""``kcoord log dump DIR`` on a data directory a real server wrote.

The server (``--fsync always``) gets a few simple-group commits, a one-member consumer group
that joins, syncs an assignment, commits as a member and leaves, and a DeleteGroups of a
second simple group. Then ``python -m coordinator log dump DIR``, on the directory of the
running server (the dump takes no lock) and again after it stopped, must print every record:
text lines in kafka-dump-log style, and with ``--json`` one JSON object per line whose
newest offset record per partition is what OffsetFetch returns.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from durability_support import (
    OFFSET_COMMIT,
    REPO,
    ServerProcess,
    Session,
    fetch_committed,
)

JOIN_GROUP, SYNC_GROUP, LEAVE_GROUP, DELETE_GROUPS = 11, 14, 13, 42
TOPIC = "dump"
MEMBER_ID_REQUIRED = 79


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "data", fsync="always", topics=[f"{TOPIC}:4"])
    try:
        yield process.start()
    finally:
        process.kill()


def dump(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coordinator", "log", "dump", str(directory), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def commit(session: Session, group: str, offsets: dict[int, int], **member: Any) -> None:
    body = {
        "group_id": group,
        "generation_id_or_member_epoch": member.get("generation", -1),
        "member_id": member.get("member_id", ""),
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": TOPIC,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": o,
                        "committed_leader_epoch": 3,
                        "committed_metadata": f"meta-{o}",
                    }
                    for p, o in offsets.items()
                ],
            }
        ],
    }
    response = session.call(OFFSET_COMMIT, 8, body)
    assert [p.error_code for t in response.topics for p in t.partitions] == [0] * len(offsets)


def consumer_group_lifecycle(session: Session, group: str) -> str:
    """Join (with the MEMBER_ID_REQUIRED round trip), sync an assignment, commit as the
    member, leave. The member id."""
    join = {
        "group_id": group,
        "session_timeout_ms": 30_000,
        "rebalance_timeout_ms": 10_000,
        "member_id": "",
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"\x00\x00\x00\x00\x00\x01\x00\x04dump"}],
        "reason": None,
    }
    joined = session.call(JOIN_GROUP, 7, join)
    if joined.error_code == MEMBER_ID_REQUIRED:
        joined = session.call(JOIN_GROUP, 7, {**join, "member_id": joined.member_id})
    assert joined.error_code == 0 and joined.leader == joined.member_id, joined
    synced = session.call(
        SYNC_GROUP,
        5,
        {
            "group_id": group,
            "generation_id": joined.generation_id,
            "member_id": joined.member_id,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocol_name": joined.protocol_name,
            "assignments": [{"member_id": joined.member_id, "assignment": b"assigned!"}],
        },
    )
    assert synced.error_code == 0 and synced.assignment == b"assigned!", synced
    commit(session, group, {3: 33}, generation=joined.generation_id, member_id=joined.member_id)
    left = session.call(
        LEAVE_GROUP,
        4,
        {
            "group_id": group,
            "members": [{"member_id": joined.member_id, "group_instance_id": None}],
        },
    )
    assert left.error_code == 0, left
    return str(joined.member_id)


def test_log_dump_prints_the_records_of_a_real_data_dir(server: ServerProcess) -> None:
    with Session(server.port) as session:
        for round_ in range(1, 4):
            commit(session, "simple", {0: 10 * round_, 1: 10 * round_ + 1})
        commit(session, "doomed", {2: 7})
        member_id = consumer_group_lifecycle(session, "members")
        deleted = session.call(DELETE_GROUPS, 2, {"groups_names": ["doomed"]})
        assert [r.error_code for r in deleted.results] == [0]
    committed = fetch_committed(server.port, ["simple", "members", "doomed"])
    assert committed == {
        ("simple", TOPIC, 0): 30,
        ("simple", TOPIC, 1): 31,
        ("members", TOPIC, 3): 33,
    }

    live_text = dump(server.data_dir)  # while the server runs (and holds the lock)
    assert server.stop() == 0
    text = dump(server.data_dir)
    assert text.returncode == 0, text.stderr
    assert text.stderr == ""
    assert live_text.returncode == 0 and live_text.stdout == text.stdout, live_text.stderr

    lines = text.stdout.splitlines()
    assert lines, "nothing dumped"
    for i, line in enumerate(lines):
        assert line.startswith(f"offset: {i} segment: 00000000000000000000.log pos: "), line
    offset_lines = [line for line in lines if "key: offset_commit::" in line]
    assert len(offset_lines) == 6 + 1 + 1 + 1  # simple x6, doomed, members, doomed tombstone
    assert any(
        "key: offset_commit::group=simple,topic=dump,partition=1 payload: offset=31,"
        "leader_epoch=3,metadata=meta-31," in line
        for line in offset_lines
    ), offset_lines
    assert any(
        "offset_commit::group=doomed,topic=dump,partition=2 payload: <DELETE>" in line
        for line in lines
    )
    assert any("key: group_metadata::group=members payload:" in line for line in lines)
    assert any(f"member_id={member_id}" in line for line in lines)

    as_json = dump(server.data_dir, "--json")
    assert as_json.returncode == 0, as_json.stderr
    objects = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert len(objects) == len(lines)
    assert [o["offset"] for o in objects] == list(range(len(objects)))
    newest: dict[tuple[str, str, int], int | None] = {}
    for o in objects:
        if o["type"] == "offset_commit":
            key = (o["key"]["group"], o["key"]["topic"], o["key"]["partition"])
            newest[key] = None if o["value"] is None else o["value"]["offset"]
            if o["value"] is not None:
                assert o["key_version"] == 1 and o["value_version"] == 3
                assert o["value"]["leader_epoch"] == 3
                assert o["value"]["metadata"] == f"meta-{o['value']['offset']}"
    assert {k: v for k, v in newest.items() if v is not None} == committed
    assert newest[("doomed", TOPIC, 2)] is None
    groups = [o for o in objects if o["type"] == "group_metadata"]
    assert groups and all(o["key"] == {"group": "members"} for o in groups)
    stable = [o for o in groups if o["value"] and o["value"]["members"]]
    assert stable, groups
    member = stable[-1]["value"]["members"][0]
    assert member["member_id"] == member_id
    assert member["assignment"] == "YXNzaWduZWQh"  # base64 of b"assigned!"
    assert groups[-1]["value"]["members"] == []  # the leave left it Empty
    assert any(o["type"] == "rebalance_event" for o in objects)
