"""The byte layout of every log record type, declared with wire's schema DSL.

Each key and value is a :class:`wire.schema.Message` mirroring Kafka's JSON
(``group-coordinator/src/main/resources/common/message/OffsetCommitKey.json`` and its
siblings): field names in snake_case, versions, nullable versions, defaults, flexible
versions. The record's bytes are an int16 version followed by the message at that version;
for keys the version names the record type. kcoord's own RebalanceEvent history uses key
version 100, which Kafka leaves unused, and a value flexible from version 0.

The in-memory types are the frozen dataclasses of :mod:`storage.records`, whose field names
are exactly these fields' names (a test checks it), so one generic mapping connects them.
"""

from __future__ import annotations

from wire.schema import Field as F
from wire.schema import Message

__all__ = [
    "GROUP_METADATA_KEY",
    "GROUP_METADATA_VALUE",
    "OFFSET_COMMIT_KEY",
    "OFFSET_COMMIT_VALUE",
    "REBALANCE_EVENT_KEY",
    "REBALANCE_EVENT_VALUE",
]

_RECORD = -1  # Message.api_key of records: they belong to no API

OFFSET_COMMIT_KEY = Message(
    "OffsetCommitKey",
    api_key=_RECORD,
    valid="0-1",
    flexible="none",
    fields=(
        F("group", "string", "0-1"),
        F("topic", "string", "0-1"),
        F("partition", "int32", "0-1"),
    ),
)

OFFSET_COMMIT_VALUE = Message(
    "OffsetCommitValue",
    api_key=_RECORD,
    valid="0-4",
    flexible="4+",
    fields=(
        F("offset", "int64", "0+"),
        F("leader_epoch", "int32", "3+", default=-1),
        F("metadata", "string", "0+"),
        F("commit_timestamp", "int64", "0+"),
        F("expire_timestamp", "int64", "1", default=-1),
    ),
)

GROUP_METADATA_KEY = Message(
    "GroupMetadataKey",
    api_key=_RECORD,
    valid="2",
    flexible="none",
    fields=(F("group", "string", "2"),),
)

_MEMBER_METADATA = (
    F("member_id", "string", "0+"),
    F("group_instance_id", "string", "3+", nullable="3+", default="null"),
    F("client_id", "string", "0+"),
    F("client_host", "string", "0+"),
    F("rebalance_timeout", "int32", "1+", default=-1),
    F("session_timeout", "int32", "0+"),
    F("subscription", "bytes", "0+"),
    F("assignment", "bytes", "0+"),
)

GROUP_METADATA_VALUE = Message(
    "GroupMetadataValue",
    api_key=_RECORD,
    valid="0-4",
    flexible="4+",
    fields=(
        F("protocol_type", "string", "0+"),
        F("generation", "int32", "0+"),
        F("protocol", "string", "0+", nullable="0+"),
        F("leader", "string", "0+", nullable="0+"),
        F("current_state_timestamp", "int64", "2+", default=-1),
        F("members", "[]", "0+", fields=_MEMBER_METADATA),
    ),
)

REBALANCE_EVENT_KEY = Message(
    "RebalanceEventKey",
    api_key=_RECORD,
    valid="100",
    flexible="none",
    fields=(F("group", "string", "100"),),
)

REBALANCE_EVENT_VALUE = Message(
    "RebalanceEventValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("event", "string", "0+"),
        F("timestamp", "int64", "0+"),
        F("generation", "int32", "0+"),
        F("member_id", "string", "0+"),
        F("group_instance_id", "string", "0+", nullable="0+", default="null"),
        F("reason", "string", "0+"),
        F("members", "[]string", "0+"),
    ),
)
