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
    "CLIENT_QUOTA_RECORD_KEY",
    "CLIENT_QUOTA_RECORD_VALUE",
    "CONFIG_RECORD_KEY",
    "CONFIG_RECORD_VALUE",
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY",
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE",
    "CONSUMER_GROUP_MEMBER_METADATA_KEY",
    "CONSUMER_GROUP_MEMBER_METADATA_VALUE",
    "CONSUMER_GROUP_METADATA_KEY",
    "CONSUMER_GROUP_METADATA_VALUE",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE",
    "GROUP_METADATA_KEY",
    "GROUP_METADATA_VALUE",
    "OFFSET_COMMIT_KEY",
    "OFFSET_COMMIT_VALUE",
    "REBALANCE_EVENT_KEY",
    "REBALANCE_EVENT_VALUE",
    "SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY",
    "SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE",
    "SHARE_GROUP_MEMBER_METADATA_KEY",
    "SHARE_GROUP_MEMBER_METADATA_VALUE",
    "SHARE_GROUP_METADATA_KEY",
    "SHARE_GROUP_METADATA_VALUE",
    "SHARE_GROUP_STATE_PARTITION_METADATA_KEY",
    "SHARE_GROUP_STATE_PARTITION_METADATA_VALUE",
    "SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY",
    "SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE",
    "SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY",
    "SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE",
    "SHARE_SNAPSHOT_KEY",
    "SHARE_SNAPSHOT_VALUE",
    "SHARE_UPDATE_KEY",
    "SHARE_UPDATE_VALUE",
    "TRANSACTION_STATE_KEY",
    "TRANSACTION_STATE_VALUE",
    "TXN_OFFSET_COMMIT_KEY",
    "TXN_OFFSET_COMMIT_VALUE",
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


# ------------------------------------------------------------------ consumer groups (KIP-848)
# Kafka 4's coordinator records (group-coordinator/src/main/resources/common/message/
# ConsumerGroup*Key/Value.json): the key's int16 version is the record type ("apiKey"), its
# fields those of version 0; values are flexible from version 0. Tagged fields Kafka added
# later (CreationTimeMs, AssignmentTimestamp, AssignmentEpochs) are not written; when read
# they are kept as unknown tags. ClassicMemberMetadata (tag 0 of the member metadata) is
# written for members using the classic protocol inside a consumer group.


def _group_key(name: str, record_type: int, *, member: bool) -> Message:
    at = str(record_type)
    fields: tuple[F, ...] = (F("group", "string", at),)
    if member:
        fields += (F("member_id", "string", at),)
    return Message(name, api_key=_RECORD, valid=at, flexible="none", fields=fields)


_TOPIC_PARTITIONS = (
    F("topic_id", "uuid", "0+"),
    F("partitions", "[]int32", "0+"),
)

CONSUMER_GROUP_METADATA_KEY = _group_key("ConsumerGroupMetadataKey", 3, member=False)
CONSUMER_GROUP_METADATA_VALUE = Message(
    "ConsumerGroupMetadataValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("epoch", "int32", "0+"),
        F("metadata_hash", "int64", "0+", default=0, tag=0, tagged="0+"),
    ),
)

CONSUMER_GROUP_MEMBER_METADATA_KEY = _group_key("ConsumerGroupMemberMetadataKey", 5, member=True)
CONSUMER_GROUP_MEMBER_METADATA_VALUE = Message(
    "ConsumerGroupMemberMetadataValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("instance_id", "string", "0+", nullable="0+"),
        F("rack_id", "string", "0+", nullable="0+"),
        F("client_id", "string", "0+"),
        F("client_host", "string", "0+"),
        F("subscribed_topic_names", "[]string", "0+"),
        F("subscribed_topic_regex", "string", "0+", nullable="0+"),
        F("rebalance_timeout_ms", "int32", "0+", default=-1),
        F("server_assignor", "string", "0+", nullable="0+"),
        F("classic_member_metadata", "struct", "0+", nullable="0+", default="null", tag=0,
          tagged="0+", fields=(
              F("session_timeout_ms", "int32", "0+"),
              F("supported_protocols", "[]", "0+", fields=(
                  F("name", "string", "0+"),
                  F("metadata", "bytes", "0+"),
              )),
          )),
    ),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _group_key(
    "ConsumerGroupTargetAssignmentMetadataKey", 6, member=False
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message(
    "ConsumerGroupTargetAssignmentMetadataValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(F("assignment_epoch", "int32", "0+"),),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _group_key(
    "ConsumerGroupTargetAssignmentMemberKey", 7, member=True
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message(
    "ConsumerGroupTargetAssignmentMemberValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(F("topic_partitions", "[]", "0+", fields=_TOPIC_PARTITIONS),),
)

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _group_key(
    "ConsumerGroupCurrentMemberAssignmentKey", 8, member=True
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message(
    "ConsumerGroupCurrentMemberAssignmentValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("member_epoch", "int32", "0+"),
        F("previous_member_epoch", "int32", "0+"),
        F("state", "int8", "0+"),
        F("assigned_partitions", "[]", "0+", fields=_TOPIC_PARTITIONS),
        F("partitions_pending_revocation", "[]", "0+", fields=_TOPIC_PARTITIONS),
    ),
)


# ------------------------------------------------------------------ share groups (KIP-932)
# Kafka 4.2's ShareGroup*Key/Value.json: types 10-15, values flexible from version 0.


def _value(name: str, *fields: F) -> Message:
    return Message(name, api_key=_RECORD, valid="0", flexible="0+", fields=fields)


SHARE_GROUP_MEMBER_METADATA_KEY = _group_key("ShareGroupMemberMetadataKey", 10, member=True)
SHARE_GROUP_MEMBER_METADATA_VALUE = _value(
    "ShareGroupMemberMetadataValue",
    F("rack_id", "string", "0+", nullable="0+"),
    F("client_id", "string", "0+"),
    F("client_host", "string", "0+"),
    F("subscribed_topic_names", "[]string", "0+"),
)
SHARE_GROUP_METADATA_KEY = _group_key("ShareGroupMetadataKey", 11, member=False)
SHARE_GROUP_METADATA_VALUE = _value(
    "ShareGroupMetadataValue",
    F("epoch", "int32", "0+"),
    F("metadata_hash", "int64", "0+", default=0, tag=0, tagged="0+"),
)
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _group_key(
    "ShareGroupTargetAssignmentMetadataKey", 12, member=False
)
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = _value(
    "ShareGroupTargetAssignmentMetadataValue", F("assignment_epoch", "int32", "0+"),
)
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _group_key(
    "ShareGroupTargetAssignmentMemberKey", 13, member=True
)
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = _value(
    "ShareGroupTargetAssignmentMemberValue",
    F("topic_partitions", "[]", "0+", fields=_TOPIC_PARTITIONS),
)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _group_key(
    "ShareGroupCurrentMemberAssignmentKey", 14, member=True
)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = _value(
    "ShareGroupCurrentMemberAssignmentValue",
    F("member_epoch", "int32", "0+"),
    F("previous_member_epoch", "int32", "0+"),
    F("state", "int8", "0+"),
    F("assigned_partitions", "[]", "0+", fields=_TOPIC_PARTITIONS),
)
_TOPIC_PARTITIONS_INFO = (
    F("topic_id", "uuid", "0+"),
    F("topic_name", "string", "0+"),
    F("partitions", "[]int32", "0+"),
)
SHARE_GROUP_STATE_PARTITION_METADATA_KEY = _group_key(
    "ShareGroupStatePartitionMetadataKey", 15, member=False
)
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = _value(
    "ShareGroupStatePartitionMetadataValue",
    F("initializing_topics", "[]", "0+", fields=_TOPIC_PARTITIONS_INFO),
    F("initialized_topics", "[]", "0+", fields=_TOPIC_PARTITIONS_INFO),
    F("deleting_topics", "[]", "0+", fields=(
        F("topic_id", "uuid", "0+"),
        F("topic_name", "string", "0+"),
    )),
)

# ------------------------------------------------------------------ transactions (kcoord's)
# storage/records.py: the transaction coordinator's state (Kafka's TransactionLogValue
# v1 fields, partitions never null) and offsets staged by open transactions.

TRANSACTION_STATE_KEY = Message(
    "TransactionStateKey",
    api_key=_RECORD,
    valid="101",
    flexible="none",
    fields=(F("transactional_id", "string", "101"),),
)
TRANSACTION_STATE_VALUE = Message(
    "TransactionStateValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("producer_id", "int64", "0+"),
        F("producer_epoch", "int16", "0+"),
        F("transaction_timeout_ms", "int32", "0+"),
        F("transaction_status", "int8", "0+"),
        F(
            "transaction_partitions",
            "[]",
            "0+",
            fields=(
                F("topic", "string", "0+"),
                F("partition_ids", "[]int32", "0+"),
            ),
        ),
        F("transaction_last_update_timestamp_ms", "int64", "0+"),
        F("transaction_start_timestamp_ms", "int64", "0+"),
        F("previous_producer_id", "int64", "0+", default=-1),
        F("next_producer_id", "int64", "0+", default=-1),
        F("client_transaction_version", "int16", "0+", default=0),
    ),
)
TXN_OFFSET_COMMIT_KEY = Message(
    "TxnOffsetCommitKey",
    api_key=_RECORD,
    valid="102",
    flexible="none",
    fields=(
        F("producer_id", "int64", "102"),
        F("group", "string", "102"),
        F("topic", "string", "102"),
        F("partition", "int32", "102"),
    ),
)
TXN_OFFSET_COMMIT_VALUE = Message(
    "TxnOffsetCommitValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("offset", "int64", "0+"),
        F("leader_epoch", "int32", "0+", default=-1),
        F("metadata", "string", "0+"),
        F("commit_timestamp", "int64", "0+"),
    ),
)


# ------------------------------------------------------------------ share groups (KIP-932)
# storage/share_records.py: Kafka's ShareSnapshot/ShareUpdate fields (Kafka 4.2, with
# DeliveryCompleteCount as tag 0), under kcoord's key versions 103 and 104.


def _share_key(name: str, record_type: int) -> Message:
    at = str(record_type)
    return Message(
        name,
        api_key=_RECORD,
        valid=at,
        flexible="none",
        fields=(
            F("group_id", "string", at),
            F("topic_id", "uuid", at),
            F("partition", "int32", at),
        ),
    )


_STATE_BATCH = (
    F("first_offset", "int64", "0+"),
    F("last_offset", "int64", "0+"),
    F("delivery_state", "int8", "0+"),
    F("delivery_count", "int16", "0+"),
)

SHARE_SNAPSHOT_KEY = _share_key("ShareSnapshotKey", 103)
SHARE_SNAPSHOT_VALUE = Message(
    "ShareSnapshotValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("snapshot_epoch", "int32", "0+"),
        F("state_epoch", "int32", "0+"),
        F("leader_epoch", "int32", "0+"),
        F("start_offset", "int64", "0+"),
        F("delivery_complete_count", "int32", "0+", default=-1, tag=0, tagged="0+"),
        F("create_timestamp", "int64", "0+"),
        F("write_timestamp", "int64", "0+"),
        F("state_batches", "[]", "0+", fields=_STATE_BATCH),
    ),
)
SHARE_UPDATE_KEY = _share_key("ShareUpdateKey", 104)
SHARE_UPDATE_VALUE = Message(
    "ShareUpdateValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("snapshot_epoch", "int32", "0+"),
        F("leader_epoch", "int32", "0+"),
        F("start_offset", "int64", "0+"),
        F("delivery_complete_count", "int32", "0+", default=-1, tag=0, tagged="0+"),
        F("state_batches", "[]", "0+", fields=_STATE_BATCH),
    ),
)

# kcoord's dynamic configuration record (storage/config_records.py): Kafka's ConfigRecord.
CONFIG_RECORD_KEY = Message(
    "ConfigRecordKey",
    api_key=_RECORD,
    valid="107",
    flexible="none",
    fields=(
        F("resource_type", "int8", "107"),
        F("resource_name", "string", "107"),
        F("name", "string", "107"),
    ),
)
CONFIG_RECORD_VALUE = Message(
    "ConfigRecordValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(
        F("value", "string", "0+", nullable="0+"),
        F("topic_id", "uuid", "0+"),
    ),
)

# kcoord's client quota record (storage/config_records.py): Kafka's ClientQuotaRecord.
CLIENT_QUOTA_RECORD_KEY = Message(
    "ClientQuotaRecordKey",
    api_key=_RECORD,
    valid="108",
    flexible="none",
    fields=(
        F("entity", "[]", "108", fields=(
            F("entity_type", "string", "108"),
            F("entity_name", "string", "108", nullable="108"),
        )),
        F("key", "string", "108"),
    ),
)
CLIENT_QUOTA_RECORD_VALUE = Message(
    "ClientQuotaRecordValue",
    api_key=_RECORD,
    valid="0",
    flexible="0+",
    fields=(F("value", "float64", "0+"),),
)
