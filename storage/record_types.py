"""The record types of the ``__consumer_offsets``-style log: for each, the key versions
naming it, its key and value schemas (:mod:`storage.record_schemas`) and dataclasses, and
the value version Kafka's writer picks. :data:`RECORD_TYPES` ties each key version to its
type, so adding a record type is one entry here; :mod:`storage.record_codec` encodes and
decodes with them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wire.schema import Message

from .config_records import (
    ClientQuotaRecordKey,
    ClientQuotaRecordValue,
    ConfigRecordKey,
    ConfigRecordValue,
)
from .record_schemas import (
    CLIENT_QUOTA_RECORD_KEY,
    CLIENT_QUOTA_RECORD_VALUE,
    CONFIG_RECORD_KEY,
    CONFIG_RECORD_VALUE,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    CONSUMER_GROUP_MEMBER_METADATA_KEY,
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    CONSUMER_GROUP_METADATA_KEY,
    CONSUMER_GROUP_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    GROUP_METADATA_KEY,
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_KEY,
    OFFSET_COMMIT_VALUE,
    REBALANCE_EVENT_KEY,
    REBALANCE_EVENT_VALUE,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    SHARE_GROUP_MEMBER_METADATA_KEY,
    SHARE_GROUP_MEMBER_METADATA_VALUE,
    SHARE_GROUP_METADATA_KEY,
    SHARE_GROUP_METADATA_VALUE,
    SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
    SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    SHARE_SNAPSHOT_KEY,
    SHARE_SNAPSHOT_VALUE,
    SHARE_UPDATE_KEY,
    SHARE_UPDATE_VALUE,
    TRANSACTION_STATE_KEY,
    TRANSACTION_STATE_VALUE,
    TXN_OFFSET_COMMIT_KEY,
    TXN_OFFSET_COMMIT_VALUE,
)
from .records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    TransactionStateKey,
    TransactionStateValue,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)
from .security_record_schemas import (
    ACCESS_CONTROL_ENTRY_KEY,
    ACCESS_CONTROL_ENTRY_VALUE,
    USER_SCRAM_CREDENTIAL_KEY,
    USER_SCRAM_CREDENTIAL_VALUE,
)
from .security_records import (
    AccessControlEntryKey,
    AccessControlEntryValue,
    UserScramCredentialKey,
    UserScramCredentialValue,
)
from .share_group_records import (
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
)
from .share_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdateKey,
    ShareUpdateValue,
)

__all__ = [
    "ACCESS_CONTROL_ENTRY_KEY_VERSION",
    "BY_KEY_TYPE",
    "BY_VALUE_TYPE",
    "CLIENT_QUOTA_RECORD_KEY_VERSION",
    "CONFIG_RECORD_KEY_VERSION",
    "EVENT_KEY_PREFIX",
    "GROUP_METADATA_KEY_VERSION",
    "OFFSET_COMMIT_KEY_VERSIONS",
    "REBALANCE_EVENT_KEY_VERSION",
    "RECORD_TYPES",
    "SHARE_SNAPSHOT_KEY_VERSION",
    "SHARE_UPDATE_KEY_VERSION",
    "TRANSACTION_STATE_KEY_VERSION",
    "TXN_OFFSET_COMMIT_KEY_VERSION",
    "USER_SCRAM_CREDENTIAL_KEY_VERSION",
    "RecordType",
]


@dataclass(frozen=True, slots=True)
class RecordType:
    """One record type: the key versions naming it, the version written, its key and value
    schemas and dataclasses, and the value version Kafka's writer picks for a value."""

    key_versions: tuple[int, ...]
    key_schema: Message
    key_type: type
    value_schema: Message
    value_type: type
    write_value_version: Callable[[Any], int]

    @property
    def write_key_version(self) -> int:
        """The key version writers use (Kafka's newest)."""
        return self.key_versions[-1]

    @property
    def newest_value_version(self) -> int:
        """The newest value version this reader knows."""
        return self.value_schema.version_range.stop - 1


def _v0(value: Any) -> int:
    return 0


OFFSET_COMMIT_KEY_VERSIONS = (0, 1)
GROUP_METADATA_KEY_VERSION = 2
#: kcoord's RebalanceEvent key version: far above Kafka's record types (0-15 in Kafka 4.x).
REBALANCE_EVENT_KEY_VERSION = 100
#: kcoord's transaction records (storage/records.py): the coordinator's state, staged offsets.
TRANSACTION_STATE_KEY_VERSION = 101
TXN_OFFSET_COMMIT_KEY_VERSION = 102
#: kcoord's share coordinator records (storage/share_records.py); Kafka's types 0 and 1.
SHARE_SNAPSHOT_KEY_VERSION = 103
SHARE_UPDATE_KEY_VERSION = 104
#: kcoord's security records (storage/security_records.py): an ACL, a SCRAM credential.
ACCESS_CONTROL_ENTRY_KEY_VERSION = 105
USER_SCRAM_CREDENTIAL_KEY_VERSION = 106
#: kcoord's dynamic configuration record (storage/config_records.py), Kafka's ConfigRecord.
CONFIG_RECORD_KEY_VERSION = 107
#: kcoord's client quota record (storage/config_records.py), Kafka's ClientQuotaRecord.
CLIENT_QUOTA_RECORD_KEY_VERSION = 108
#: The first bytes of every RebalanceEvent key (its version): history, not state.
EVENT_KEY_PREFIX = struct.pack(">h", REBALANCE_EVENT_KEY_VERSION)

_TYPES = (
    RecordType(
        OFFSET_COMMIT_KEY_VERSIONS,
        OFFSET_COMMIT_KEY,
        OffsetCommitKey,
        OFFSET_COMMIT_VALUE,
        OffsetCommitValue,
        # Kafka writes v1 only to keep an explicit expire timestamp (OffsetCommit v2-4).
        lambda value: 1 if value.expire_timestamp != -1 else 3,
    ),
    RecordType(
        (GROUP_METADATA_KEY_VERSION,),
        GROUP_METADATA_KEY,
        GroupMetadataKey,
        GROUP_METADATA_VALUE,
        GroupMetadataValue,
        lambda value: 3,
    ),
    RecordType(
        (REBALANCE_EVENT_KEY_VERSION,),
        REBALANCE_EVENT_KEY,
        RebalanceEventKey,
        REBALANCE_EVENT_VALUE,
        RebalanceEventValue,
        lambda value: 0,
    ),
    # Kafka 4's consumer group records: the key version is the record type; value v0.
    *(
        RecordType((record_type,), key_schema, key_type, value_schema, value_type, _v0)
        for record_type, key_schema, key_type, value_schema, value_type in (
            (3, CONSUMER_GROUP_METADATA_KEY, ConsumerGroupMetadataKey,
             CONSUMER_GROUP_METADATA_VALUE, ConsumerGroupMetadataValue),
            (5, CONSUMER_GROUP_MEMBER_METADATA_KEY, ConsumerGroupMemberMetadataKey,
             CONSUMER_GROUP_MEMBER_METADATA_VALUE, ConsumerGroupMemberMetadataValue),
            (6, CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
             ConsumerGroupTargetAssignmentMetadataKey,
             CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
             ConsumerGroupTargetAssignmentMetadataValue),
            (7, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
             ConsumerGroupTargetAssignmentMemberKey,
             CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
             ConsumerGroupTargetAssignmentMemberValue),
            (8, CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
             ConsumerGroupCurrentMemberAssignmentKey,
             CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
             ConsumerGroupCurrentMemberAssignmentValue),
            # Kafka 4.2's share group records (storage/share_group_records.py).
            (10, SHARE_GROUP_MEMBER_METADATA_KEY, ShareGroupMemberMetadataKey,
             SHARE_GROUP_MEMBER_METADATA_VALUE, ShareGroupMemberMetadataValue),
            (11, SHARE_GROUP_METADATA_KEY, ShareGroupMetadataKey,
             SHARE_GROUP_METADATA_VALUE, ShareGroupMetadataValue),
            (12, SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
             ShareGroupTargetAssignmentMetadataKey,
             SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
             ShareGroupTargetAssignmentMetadataValue),
            (13, SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY, ShareGroupTargetAssignmentMemberKey,
             SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE, ShareGroupTargetAssignmentMemberValue),
            (14, SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
             ShareGroupCurrentMemberAssignmentKey,
             SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
             ShareGroupCurrentMemberAssignmentValue),
            (15, SHARE_GROUP_STATE_PARTITION_METADATA_KEY, ShareGroupStatePartitionMetadataKey,
             SHARE_GROUP_STATE_PARTITION_METADATA_VALUE, ShareGroupStatePartitionMetadataValue),
            # kcoord's transaction records (storage/records.py).
            (TRANSACTION_STATE_KEY_VERSION, TRANSACTION_STATE_KEY, TransactionStateKey,
             TRANSACTION_STATE_VALUE, TransactionStateValue),
            (TXN_OFFSET_COMMIT_KEY_VERSION, TXN_OFFSET_COMMIT_KEY, TxnOffsetCommitKey,
             TXN_OFFSET_COMMIT_VALUE, TxnOffsetCommitValue),
            # kcoord's share coordinator records (storage/share_records.py).
            (SHARE_SNAPSHOT_KEY_VERSION, SHARE_SNAPSHOT_KEY, ShareSnapshotKey,
             SHARE_SNAPSHOT_VALUE, ShareSnapshotValue),
            (SHARE_UPDATE_KEY_VERSION, SHARE_UPDATE_KEY, ShareUpdateKey,
             SHARE_UPDATE_VALUE, ShareUpdateValue),
            # kcoord's security records (storage/security_records.py).
            (ACCESS_CONTROL_ENTRY_KEY_VERSION, ACCESS_CONTROL_ENTRY_KEY, AccessControlEntryKey,
             ACCESS_CONTROL_ENTRY_VALUE, AccessControlEntryValue),
            (USER_SCRAM_CREDENTIAL_KEY_VERSION, USER_SCRAM_CREDENTIAL_KEY,
             UserScramCredentialKey, USER_SCRAM_CREDENTIAL_VALUE, UserScramCredentialValue),
            # kcoord's dynamic configuration record (storage/config_records.py).
            (CONFIG_RECORD_KEY_VERSION, CONFIG_RECORD_KEY, ConfigRecordKey,
             CONFIG_RECORD_VALUE, ConfigRecordValue),
            (CLIENT_QUOTA_RECORD_KEY_VERSION, CLIENT_QUOTA_RECORD_KEY, ClientQuotaRecordKey,
             CLIENT_QUOTA_RECORD_VALUE, ClientQuotaRecordValue),
        )
    ),
)

#: Record types by key version.
RECORD_TYPES: dict[int, RecordType] = {v: t for t in _TYPES for v in t.key_versions}
#: Record types by key and by value dataclass (what writers look up).
BY_KEY_TYPE: dict[type, RecordType] = {t.key_type: t for t in _TYPES}
BY_VALUE_TYPE: dict[type, RecordType] = {t.value_type: t for t in _TYPES}
