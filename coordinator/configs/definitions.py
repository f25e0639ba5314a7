"""The config keys kcoord knows, by resource, as Kafka's ``ConfigDef``s define them (each
key a :class:`ConfigKey`: type, default, validator, documentation).

- Topic keys: Kafka 4's ``LogConfig`` (``TopicConfig`` names), each with its broker synonyms
  (``ServerTopicConfigSynonyms``: ``retention.ms`` <- ``log.retention.ms``,
  ``log.retention.minutes``, ``log.retention.hours``).
- Group keys: ``GroupConfig`` (``consumer.*`` and the ``share.*`` keys), defaulting to the
  broker's ``group.consumer.*`` / ``group.share.*``.
- Broker keys: ``broker_keys.SERVER_PROPERTIES``; ``BROKER_KEYS`` are its dynamic ones
  (``DynamicBrokerConfig.AllDynamicConfigs``); ``PER_BROKER_KEYS`` may only be set for one
  broker, not the cluster-wide default.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.configs.broker_keys import COMPRESSION_TYPES, SERVER_PROPERTIES, TIMESTAMP_TYPES
from coordinator.configs.config_key import (
    KAFKA_DOC_PREFIX,
    LONG_MAX,
    ConfigKey,
    InvalidConfig,
    ListOf,
    OneOf,
    Validator,
    at_least,
    between,
    list_parts,
)
from coordinator.configs.security_keys import PER_BROKER_KEYS, listener_base_key
from wire.constants import ConfigType

__all__ = [
    "BROKER_KEYS",
    "GROUP_BROKER_DEFAULTS",
    "GROUP_KEYS",
    "PER_BROKER_KEYS",
    "SERVER_PROPERTIES",
    "SYNONYM_SCALE",
    "TOPIC_KEYS",
    "TOPIC_SYNONYMS",
    "ConfigKey",
    "ConfigType",
    "InvalidConfig",
    "broker_key",
    "known_keys",
    "list_parts",
]


def _key(name: str, kind: ConfigType, default: str | None, doc: str,
         validator: Validator | None = None) -> tuple[str, ConfigKey]:
    return name, ConfigKey(name, kind, default, doc, validator, dynamic=True)


def _topic_key(name: str, kind: ConfigType, default: str | None,
               validator: Validator | None = None) -> tuple[str, ConfigKey]:
    return _key(name, kind, default, f"{KAFKA_DOC_PREFIX}topic:{name}", validator)


B, S, IN, L, D, LI = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG,
                      ConfigType.DOUBLE, ConfigType.LIST)

#: Kafka 4's topic-level configs (``LogConfig``), each documented as Kafka does (``TOPIC_DOCS``).
TOPIC_KEYS: dict[str, ConfigKey] = dict((
    _topic_key("cleanup.policy", LI, "delete", ListOf(("compact", "delete"))),
    _topic_key("compression.gzip.level", IN, "-1", between(-1, 9)),
    _topic_key("compression.lz4.level", IN, "9", between(1, 17)),
    _topic_key("compression.type", S, "producer", OneOf(COMPRESSION_TYPES)),
    _topic_key("compression.zstd.level", IN, "3", between(-131072, 22)),
    _topic_key("delete.retention.ms", L, "86400000", at_least(0)),
    _topic_key("file.delete.delay.ms", L, "60000", at_least(0)),
    _topic_key("flush.messages", L, str(LONG_MAX), at_least(1)),
    _topic_key("flush.ms", L, str(LONG_MAX), at_least(0)),
    _topic_key("follower.replication.throttled.replicas", LI, ""),
    _topic_key("index.interval.bytes", IN, "4096", at_least(0)),
    _topic_key("leader.replication.throttled.replicas", LI, ""),
    _topic_key("local.retention.bytes", L, "-2", at_least(-2)),
    _topic_key("local.retention.ms", L, "-2", at_least(-2)),
    _topic_key("max.compaction.lag.ms", L, str(LONG_MAX), at_least(1)),
    _topic_key("max.message.bytes", IN, "1048588", at_least(0)),
    _topic_key("message.timestamp.after.max.ms", L, str(LONG_MAX), at_least(0)),
    _topic_key("message.timestamp.before.max.ms", L, str(LONG_MAX), at_least(0)),
    _topic_key("message.timestamp.type", S, "CreateTime", OneOf(TIMESTAMP_TYPES)),
    _topic_key("min.cleanable.dirty.ratio", D, "0.5", between(0, 1)),
    _topic_key("min.compaction.lag.ms", L, "0", at_least(0)),
    _topic_key("min.insync.replicas", IN, "1", at_least(1)),
    _topic_key("preallocate", B, "false"),
    _topic_key("remote.log.copy.disable", B, "false"),
    _topic_key("remote.log.delete.on.disable", B, "false"),
    _topic_key("remote.storage.enable", B, "false"),
    _topic_key("retention.bytes", L, "-1", None),
    _topic_key("retention.ms", L, "604800000", at_least(-1)),
    _topic_key("segment.bytes", IN, "1073741824", at_least(14)),
    _topic_key("segment.index.bytes", IN, "10485760", at_least(4)),
    _topic_key("segment.jitter.ms", L, "0", at_least(0)),
    _topic_key("segment.ms", L, "604800000", at_least(1)),
    _topic_key("unclean.leader.election.enable", B, "false"),
))

#: A topic key's broker synonyms, in order of precedence (``ServerTopicConfigSynonyms``).
TOPIC_SYNONYMS: dict[str, tuple[str, ...]] = {
    "segment.bytes": ("log.segment.bytes",),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
    "segment.jitter.ms": ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    "segment.index.bytes": ("log.index.size.max.bytes",),
    "flush.messages": ("log.flush.interval.messages",),
    "flush.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    "retention.bytes": ("log.retention.bytes",),
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "max.message.bytes": ("message.max.bytes",),
    "index.interval.bytes": ("log.index.interval.bytes",),
    "delete.retention.ms": ("log.cleaner.delete.retention.ms",),
    "min.compaction.lag.ms": ("log.cleaner.min.compaction.lag.ms",),
    "max.compaction.lag.ms": ("log.cleaner.max.compaction.lag.ms",),
    "file.delete.delay.ms": ("log.segment.delete.delay.ms",),
    "min.cleanable.dirty.ratio": ("log.cleaner.min.cleanable.ratio",),
    "cleanup.policy": ("log.cleanup.policy",),
    "unclean.leader.election.enable": ("unclean.leader.election.enable",),
    "min.insync.replicas": ("min.insync.replicas",),
    "compression.type": ("compression.type",),
    "compression.gzip.level": ("compression.gzip.level",),
    "compression.lz4.level": ("compression.lz4.level",),
    "compression.zstd.level": ("compression.zstd.level",),
    "preallocate": ("log.preallocate",),
    "message.timestamp.type": ("log.message.timestamp.type",),
    "message.timestamp.before.max.ms": ("log.message.timestamp.before.max.ms",),
    "message.timestamp.after.max.ms": ("log.message.timestamp.after.max.ms",),
    "local.retention.ms": ("log.local.retention.ms",),
    "local.retention.bytes": ("log.local.retention.bytes",),
}

#: How a broker synonym's value reads in the topic key's unit (hours and minutes -> ms).
SYNONYM_SCALE: dict[str, int] = {
    "log.retention.minutes": 60_000, "log.retention.hours": 3_600_000,
    "log.roll.hours": 3_600_000, "log.roll.jitter.hours": 3_600_000,
}

#: ``GroupConfig``'s keys whose default is a broker key's value
#: (``GroupCoordinatorConfig.extractGroupConfigMap``).
GROUP_BROKER_DEFAULTS: dict[str, str] = {
    "consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms": "group.consumer.session.timeout.ms",
    "share.heartbeat.interval.ms": "group.share.heartbeat.interval.ms",
    "share.record.lock.duration.ms": "group.share.record.lock.duration.ms",
    "share.session.timeout.ms": "group.share.session.timeout.ms",
}


def _group_key(name: str, kind: ConfigType, validator: Validator) -> tuple[str, ConfigKey]:
    """A ``GroupConfig`` key following its broker key: that key's default and documentation
    (Kafka defines both from the same ``GroupCoordinatorConfig`` / ``ShareGroupConfig``
    constants)."""
    broker = SERVER_PROPERTIES[GROUP_BROKER_DEFAULTS[name]]
    return name, ConfigKey(name, kind, broker.default, broker.doc, validator, dynamic=True)


#: ``GroupConfig``: defaults are the broker's ``group.consumer.*`` / ``group.share.*``.
GROUP_KEYS: dict[str, ConfigKey] = dict((
    _group_key("consumer.heartbeat.interval.ms", IN, at_least(1)),
    _group_key("consumer.session.timeout.ms", IN, at_least(1)),
    ("share.auto.offset.reset", ConfigKey(
        "share.auto.offset.reset", S, "latest", KAFKA_DOC_PREFIX + "share.auto.offset.reset",
        OneOf(("latest", "earliest")), dynamic=True)),
    _group_key("share.heartbeat.interval.ms", IN, at_least(1)),
    _group_key("share.record.lock.duration.ms", IN, at_least(1000)),
    _group_key("share.session.timeout.ms", IN, at_least(1)),
))

#: The broker keys AlterConfigs may change (a subset of Kafka's AllDynamicConfigs: the log,
#: cleaner, thread-pool, connection and producer-state ones, and the listeners).
BROKER_KEYS: dict[str, ConfigKey] = {
    name: key for name, key in sorted(SERVER_PROPERTIES.items()) if key.dynamic}

def broker_key(name: str) -> ConfigKey | None:
    """A broker-level key's definition; a listener override's is its base key's
    (``KafkaConfig.configType`` through ``DynamicBrokerConfig.brokerConfigSynonyms``)."""
    known = SERVER_PROPERTIES.get(name)
    if known is None and (base := listener_base_key(name)) is not None:
        known = SERVER_PROPERTIES.get(base)
    return known


def known_keys(resource_type: int) -> Mapping[str, ConfigKey]:
    """The keys of a resource type (2 topic, 4 broker, 32 group)."""
    return {2: TOPIC_KEYS, 4: BROKER_KEYS, 32: GROUP_KEYS}.get(resource_type, {})
