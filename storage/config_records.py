"""The dynamic configuration records: what AlterConfigs and IncrementalAlterConfigs change,
and the client quotas AlterClientQuotas changes.

They carry the fields of Kafka's metadata ``ConfigRecord``
(``metadata/src/main/resources/common/metadata/ConfigRecord.json``: resource type, resource
name, config name, value -- a null value deletes the key). Kafka keeps them in the cluster
metadata log; kcoord's log shares its key versions with ``__consumer_offsets``, so the record
gets a key version of its own, 107 (beside the transaction records' 101-102 and the share
records' 103-104; 105-106 are left to the ACL records).

The key is (resource type, resource name, config name), so the compacted log keeps the newest
value of every key. A deletion is a value whose ``value`` is null, never a tombstone: a topic's
creation configs live in its ``topic.json``, and a tombstone the compaction drops would bring
them back. A topic's records carry its topic id, so a record of a deleted topic never applies to
a new topic of the same name.

The client quota record (key version 108) carries the fields of Kafka's metadata
``ClientQuotaRecord`` (entity: a list of (entity type, entity name -- null for the default
entity); quota key; value). The key is (entity, quota key); Kafka's ``remove`` is the key's
tombstone (nothing else remembers a quota, so compaction may drop it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from wire.kafka_uuid import ZERO_UUID

__all__ = [
    "CONFIG_KEY_TYPES",
    "NO_TOPIC_ID",
    "ClientQuotaEntityData",
    "ClientQuotaRecordKey",
    "ClientQuotaRecordValue",
    "ConfigRecordKey",
    "ConfigRecordValue",
]

#: The topic id of a record about a broker or a group (Kafka's ``Uuid.ZERO_UUID``).
NO_TOPIC_ID = ZERO_UUID


@dataclass(frozen=True, slots=True)
class ConfigRecordKey:
    """Which key of which resource (Kafka's ConfigResource.Type ids: 2 topic, 4 broker,
    32 group; a broker's name is its node id, the empty name the cluster-wide default)."""

    resource_type: int
    resource_name: str
    name: str


@dataclass(frozen=True, slots=True)
class ConfigRecordValue:
    """The key's new value (None: deleted); a topic's id (``NO_TOPIC_ID`` otherwise)."""

    value: str | None
    topic_id: uuid.UUID = NO_TOPIC_ID


@dataclass(frozen=True, slots=True)
class ClientQuotaEntityData:
    """One component of a client quota entity: its type (``user``, ``client-id``, ``ip``)
    and name (None: the type's default entity)."""

    entity_type: str
    entity_name: str | None


@dataclass(frozen=True, slots=True)
class ClientQuotaRecordKey:
    """Which quota of which entity (Kafka's ClientQuotaRecord entity and key); the entity's
    components in one canonical order (by type), so an entity always has one key."""

    entity: tuple[ClientQuotaEntityData, ...]
    key: str


@dataclass(frozen=True, slots=True)
class ClientQuotaRecordValue:
    """The quota's new value (Kafka's ClientQuotaRecord value; a removal is a tombstone)."""

    value: float


#: The record types the dynamic config shard replays.
CONFIG_KEY_TYPES: tuple[type, ...] = (ConfigRecordKey, ClientQuotaRecordKey)
