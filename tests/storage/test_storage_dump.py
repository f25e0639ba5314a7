"""dump: `kcoord log dump DIR`, text and --json."""

from __future__ import annotations

import base64
import io
import json
import os

from storage.dump import main
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

MEMBER = MemberMetadata("m1", None, "c1", "/10.0.0.1", 300000, 10000, b"\x00\x01", b"\x02")
RECORDS = [
    Record(OffsetCommitKey("g1", "t", 0), OffsetCommitValue(5, -1, "", 1_700_000_000_000)),
    Record(GroupMetadataKey("g1"), GroupMetadataValue("consumer", 1, "range", "m1", 7, (MEMBER,))),
    Record(RebalanceEventKey("g1"), RebalanceEventValue("rebalance_end", 9, 1, members=("m1",))),
    Record(OffsetCommitKey("g1", "t", 0), None),
]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


def write(data_dir: str) -> None:
    with Log.open(data_dir) as log:
        log.append(RECORDS)


def test_text_output(data_dir: str) -> None:
    write(data_dir)
    code, out, err = run([data_dir])
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (
        "offset: 0 segment: 00000000000000000000.log pos: 24 "
        "key: offset_commit::group=g1,topic=t,partition=0 "
        "payload: offset=5,leader_epoch=-1,metadata=,commit_timestamp=2023-11-14T22:13:20.000Z,"
        "expire_timestamp=-1"
    )
    assert lines[1].startswith("offset: 1 segment: 00000000000000000000.log pos: 79 ")
    assert "key: group_metadata::group=g1 payload: protocol_type=consumer,generation=1," in lines[1]
    assert "members=[{member_id=m1,group_instance_id=null,client_id=c1," in lines[1]
    assert "subscription=0001,assignment=02}]" in lines[1]
    assert ("key: rebalance_event::group=g1 payload: event=rebalance_end,"
            "timestamp=1970-01-01T00:00:00.009Z") in lines[2]
    assert lines[3].endswith("key: offset_commit::group=g1,topic=t,partition=0 payload: <DELETE>")


def test_json_output(data_dir: str) -> None:
    write(data_dir)
    code, out, _ = run([data_dir, "--json"])
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0] == {
        "offset": 0,
        "segment": "00000000000000000000.log",
        "pos": 24,
        "type": "offset_commit",
        "key_version": 1,
        "key": {"group": "g1", "topic": "t", "partition": 0},
        "value_version": 3,
        "value": {
            "offset": 5,
            "leader_epoch": -1,
            "metadata": "",
            "commit_timestamp": 1_700_000_000_000,
            "expire_timestamp": -1,
        },
    }
    member = rows[1]["value"]["members"][0]
    assert base64.b64decode(member["subscription"]) == b"\x00\x01"
    assert rows[2]["type"] == "rebalance_event" and rows[2]["value"]["members"] == ["m1"]
    assert rows[3]["value"] is None and "value_version" not in rows[3]


def test_works_while_a_server_holds_the_lock(data_dir: str) -> None:
    with Log.open(data_dir) as log:
        log.append(RECORDS[:1])
        code, out, _ = run([data_dir])
    assert code == 0 and len(out.splitlines()) == 1


def test_bad_directory(tmp_path: object) -> None:
    code, out, err = run([os.path.join(str(tmp_path), "missing")])
    assert code == 2 and out == ""
    assert err.startswith("kcoord log dump: ") and err.count("\n") == 1


def test_damage_is_reported_after_the_good_records(data_dir: str) -> None:
    write(data_dir)
    with open(os.path.join(data_dir, "00000000000000000000.log"), "ab") as f:
        f.write(b"\x00\x00\x00\x30torn")
    code, out, err = run([data_dir])
    assert code == 1 and len(out.splitlines()) == 4
    assert "stopped at byte" in err and "8 bytes not shown" in err


def test_unknown_and_undecodable_records(data_dir: str) -> None:
    from storage.record_codec import encode_key
    from storage.segment import encode_entry

    write(data_dir)
    with open(os.path.join(data_dir, "00000000000000000000.log"), "ab") as f:
        f.write(encode_entry(b"\x00\x09\x00\x01x", b"\x00\x00\xab"))
        f.write(encode_entry(encode_key(OffsetCommitKey("g", "t", 1)), b"\x00\x03bad"))
    code, out, _ = run([data_dir])
    lines = out.splitlines()
    assert code == 0
    assert "key: unknown::version=9,raw=000900017" in lines[4]
    assert "payload: value_hex=0000ab" in lines[4]
    assert "payload: <undecodable: " in lines[5]
    _, out, _ = run(["--json", data_dir])
    assert json.loads(out.splitlines()[5])["error"].startswith("bad OffsetCommitValue v3")


def test_help_exits_zero(capsys: object) -> None:
    assert main(["--help"]) == 0


def test_dump_shows_consumer_group_records(tmp_path: object) -> None:
    import uuid

    from storage.records import (
        ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMemberValue,
        TopicPartitions,
    )

    data_dir = os.path.join(str(tmp_path), "d")
    topic = uuid.UUID(int=9)
    with Log.open(data_dir) as log:
        log.append([Record(ConsumerGroupTargetAssignmentMemberKey("cg", "m1"),
                           ConsumerGroupTargetAssignmentMemberValue(
                               (TopicPartitions(topic, (0, 2)),)))])
    out, err = io.StringIO(), io.StringIO()
    assert main([data_dir], out, err) == 0
    line = out.getvalue().splitlines()[0]
    assert "key: consumer_group_target_assignment_member::group=cg,member_id=m1" in line
    assert f"topic_partitions=[{{topic_id={topic},partitions=[0;2]}}]" in line
    out = io.StringIO()
    assert main([data_dir, "--json"], out, err) == 0
    entry = json.loads(out.getvalue().splitlines()[0])
    assert entry["type"] == "consumer_group_target_assignment_member"
    assert entry["key_version"] == 7
    assert entry["value"]["topic_partitions"] == [{"topic_id": str(topic), "partitions": [0, 2]}]


def test_filters_decoded_members_and_an_empty_directory(data_dir: str, tmp_path: object) -> None:
    """Issue 15 item 18: --group and --type filter; a consumer-protocol member's subscription
    and assignment are decoded; a directory without a log is an error, not silence."""
    from wire.consumer_protocol_schema import encode_assignment, encode_subscription

    subscription = encode_subscription(0, {"topics": ["t"], "user_data": None})
    assignment = encode_assignment(0, {"assigned_partitions": [
        {"topic": "t", "partitions": [0, 2]}], "user_data": None})
    member = MemberMetadata("m9", None, "c9", "/h", 300, 100, subscription, assignment)
    with Log.open(data_dir) as log:
        log.append([
            Record(OffsetCommitKey("g1", "t", 0), OffsetCommitValue(5, -1, "", 1)),
            Record(OffsetCommitKey("g2", "t", 0), OffsetCommitValue(6, -1, "", 1)),
            Record(GroupMetadataKey("g2"),
                   GroupMetadataValue("consumer", 1, "range", "m9", 1, (member,))),
        ])
    code, out, _ = run([data_dir, "--group", "g2"])
    assert code == 0 and len(out.splitlines()) == 2
    code, out, _ = run([data_dir, "--group", "g2", "--type", "group_metadata"])
    (line,) = out.splitlines()
    assert "subscription={topics=[t]},assignment={t=[0;2]}" in line
    empty = os.path.join(str(tmp_path), "empty")
    os.makedirs(empty)
    code, out, err = run([empty])
    assert code == 2 and out == "" and "no kcoord log here" in err


def test_security_records_dump_without_credential_keys(data_dir: str) -> None:
    """A SCRAM credential's salt and keys never reach a dump (text or JSON); an ACL is
    shown whole, and a removal as the key's tombstone."""
    import uuid

    from storage.security_records import (
        AccessControlEntryKey,
        AccessControlEntryValue,
        UserScramCredentialKey,
        UserScramCredentialValue,
    )

    salt, stored, server = b"\xa1" * 32, b"\xb2" * 32, b"\xc3" * 32
    acl_id = uuid.UUID(int=7)
    with Log.open(data_dir) as log:
        log.append([
            Record(UserScramCredentialKey("alice", 1),
                   UserScramCredentialValue(salt, stored, server, 4096)),
            Record(AccessControlEntryKey(acl_id),
                   AccessControlEntryValue(2, "orders", 3, "User:alice", "*", 3, 3)),
            Record(AccessControlEntryKey(acl_id), None),
        ])
    for argv in ([data_dir], ["--json", data_dir]):
        code, out, err = run(argv)
        assert code == 0 and err == ""
        for secret in (salt, stored, server):
            assert secret.hex() not in out
            assert base64.b64encode(secret).decode() not in out
        assert "alice" in out and "4096" in out and "orders" in out
    _, text, _ = run([data_dir])
    assert "key: user_scram_credential::name=alice,mechanism=1" in text
    assert text.splitlines()[2].endswith("payload: <DELETE>")
