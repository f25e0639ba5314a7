"""The config keys kcoord knows, as Kafka's ``ConfigDef``s define them: type, default,
validator, documentation.

- Topic keys: Kafka 4's ``LogConfig`` (``TopicConfig`` names), each with its broker synonyms
  (``ServerTopicConfigSynonyms``: ``retention.ms`` <- ``log.retention.ms``,
  ``log.retention.minutes``, ``log.retention.hours``).
- Group keys: ``GroupConfig`` (``consumer.*`` and the ``share.*`` keys).
- Broker keys that ``DynamicBrokerConfig.AllDynamicConfigs`` makes dynamic and kcoord
  knows; ``PER_BROKER_KEYS`` may only be set for one broker, not the cluster-wide default.

Parsing follows ``ConfigDef.parseType`` and its validators, with Kafka's messages
("Invalid value x for configuration y: Not a number of type LONG").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wire.constants import ConfigType

__all__ = [
    "BROKER_KEYS",
    "GROUP_KEYS",
    "PER_BROKER_KEYS",
    "SYNONYM_SCALE",
    "TOPIC_KEYS",
    "TOPIC_SYNONYMS",
    "ConfigKey",
    "ConfigType",
    "InvalidConfig",
    "known_keys",
    "list_parts",
]

_LONG_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1


class InvalidConfig(ValueError):
    """Kafka's ``ConfigException``: the message is Kafka's."""


Validator = Callable[[str, object], str | None]
"""(name, parsed value) -> Kafka's validator message, or None when valid."""


def between(low: float | None, high: float | None) -> Validator:
    """``ConfigDef.Range.between`` (``atLeast``: no upper bound), with its messages."""
    def check(_n: str, v: object) -> str | None:
        assert isinstance(v, int | float)
        if low is not None and v < low:
            return f"Value must be at least {low}"
        if high is not None and v > high:
            return f"Value must be no more than {high}"
        return None
    return check


def at_least(minimum: float) -> Validator:
    """``ConfigDef.Range.atLeast``."""
    return between(minimum, None)


def one_of(*options: str) -> Validator:
    """``ConfigDef.ValidString.in``."""
    return lambda _n, v: None if v in options else f"String must be one of: {', '.join(options)}"


def list_of(*options: str) -> Validator:
    """``ConfigDef.ValidList.in``."""
    def check(_n: str, v: object) -> str | None:
        assert isinstance(v, list)
        bad = [item for item in v if item not in options]
        return None if not bad else f"String must be one of: {', '.join(options)}"
    return check


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One key: its type, default (as Kafka prints it; None: no default), validator and
    documentation."""

    name: str
    type: ConfigType
    default: str | None
    doc: str
    validator: Validator | None = None

    def parse(self, value: str) -> object:
        """``value`` parsed and validated; InvalidConfig with Kafka's message otherwise."""
        parsed = _parse(self.name, self.type, value)
        if self.validator is not None:
            problem = self.validator(self.name, parsed)
            if problem is not None:
                shown = ",".join(parsed) if isinstance(parsed, list) else value
                raise InvalidConfig(
                    f"Invalid value {shown} for configuration {self.name}: {problem}")
        return parsed


def list_parts(value: str | None) -> list[str]:
    """A LIST value's items (``ConfigDef.parseType``: trimmed, empty items dropped)."""
    if value is None or not value.strip():
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def _parse(name: str, kind: ConfigType, value: str) -> object:
    text = value.strip()

    def bad(what: str) -> InvalidConfig:
        return InvalidConfig(f"Invalid value {value} for configuration {name}: {what}")

    if kind is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise bad("Expected value to be either true or false")
    if kind in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        bound = {ConfigType.INT: _INT_MAX, ConfigType.SHORT: 2**15 - 1,
                 ConfigType.LONG: _LONG_MAX}[kind]
        try:
            number = int(text)
        except ValueError:
            raise bad(f"Not a number of type {kind.name}") from None
        if not -bound - 1 <= number <= bound:
            raise bad(f"Not a number of type {kind.name}")
        return number
    if kind is ConfigType.DOUBLE:
        try:
            return float(text)
        except ValueError:
            raise bad("Not a number of type DOUBLE") from None
    if kind is ConfigType.LIST:
        return list_parts(value)
    return text


def _key(name: str, kind: ConfigType, default: str | None, doc: str,
         validator: Validator | None = None) -> tuple[str, ConfigKey]:
    return name, ConfigKey(name, kind, default, doc, validator)


B, S, IN, L, D, LI = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG,
                     ConfigType.DOUBLE, ConfigType.LIST)
_COMPRESSION = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")

#: Kafka 4's topic-level configs (``LogConfig``).
TOPIC_KEYS: dict[str, ConfigKey] = dict((
    _key("cleanup.policy", LI, "delete",
         "The retention policy of old log segments: delete, compact, or both.",
         list_of("compact", "delete")),
    _key("compression.gzip.level", IN, "-1", "The compression level when gzip is used.",
         between(-1, 9)),
    _key("compression.lz4.level", IN, "9", "The compression level when lz4 is used.",
         between(1, 17)),
    _key("compression.type", S, "producer", "The final compression type of the topic.",
         one_of(*_COMPRESSION)),
    _key("compression.zstd.level", IN, "3", "The compression level when zstd is used.",
         between(-131072, 22)),
    _key("delete.retention.ms", L, "86400000",
         "How long delete tombstones are kept for log compacted topics.", at_least(0)),
    _key("file.delete.delay.ms", L, "60000",
         "The time to wait before deleting a file from the filesystem.", at_least(0)),
    _key("flush.messages", L, str(_LONG_MAX),
         "The number of messages written between forced fsyncs.", at_least(1)),
    _key("flush.ms", L, str(_LONG_MAX), "The time between forced fsyncs.", at_least(0)),
    _key("follower.replication.throttled.replicas", LI, "",
         "Replicas whose log replication is throttled on the follower side."),
    _key("index.interval.bytes", IN, "4096",
         "How frequently an index entry is added to the offset index.", at_least(0)),
    _key("leader.replication.throttled.replicas", LI, "",
         "Replicas whose log replication is throttled on the leader side."),
    _key("local.retention.bytes", L, "-2",
         "The local size a partition can grow to before old segments are deleted.",
         at_least(-2)),
    _key("local.retention.ms", L, "-2",
         "How long a local log segment is kept before it is deleted.", at_least(-2)),
    _key("max.compaction.lag.ms", L, str(_LONG_MAX),
         "The longest a message stays ineligible for compaction.", at_least(1)),
    _key("max.message.bytes", IN, "1048588",
         "The largest record batch size allowed by Kafka (after compression).", at_least(0)),
    _key("message.timestamp.after.max.ms", L, str(_LONG_MAX),
         "How far a message timestamp may be ahead of the broker's timestamp.", at_least(0)),
    _key("message.timestamp.before.max.ms", L, str(_LONG_MAX),
         "How far a message timestamp may be behind the broker's timestamp.", at_least(0)),
    _key("message.timestamp.type", S, "CreateTime",
         "Whether the timestamp in the message is create time or log append time.",
         one_of(*_TIMESTAMP_TYPES)),
    _key("min.cleanable.dirty.ratio", D, "0.5",
         "How frequently the log compactor attempts to clean the log.", between(0, 1)),
    _key("min.compaction.lag.ms", L, "0",
         "The shortest a message stays uncompacted in the log.", at_least(0)),
    _key("min.insync.replicas", IN, "1",
         "The minimum number of in-sync replicas a write with acks=all needs.", at_least(1)),
    _key("preallocate", B, "false", "Whether to preallocate a file for a new log segment."),
    _key("remote.log.copy.disable", B, "false", "Whether to stop copying to tiered storage."),
    _key("remote.log.delete.on.disable", B, "false",
         "Whether to delete remote data when tiered storage is disabled."),
    _key("remote.storage.enable", B, "false", "Whether tiered storage is enabled."),
    _key("retention.bytes", L, "-1",
         "The largest a partition can grow to before old segments are deleted.", None),
    _key("retention.ms", L, "604800000",
         "How long a log is kept before old segments are deleted.", at_least(-1)),
    _key("segment.bytes", IN, "1073741824", "The segment file size for the log.",
         at_least(14)),
    _key("segment.index.bytes", IN, "10485760",
         "The size of the index that maps offsets to file positions.", at_least(4)),
    _key("segment.jitter.ms", L, "0",
         "The maximum random jitter subtracted from the scheduled segment roll time.",
         at_least(0)),
    _key("segment.ms", L, "604800000",
         "The period after which Kafka rolls a segment even if it is not full.", at_least(1)),
    _key("unclean.leader.election.enable", B, "false",
         "Whether replicas not in the ISR may be elected leader as a last resort."),
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

#: ``GroupConfig``: defaults are the broker's ``group.consumer.*`` / ``group.share.*``.
GROUP_KEYS: dict[str, ConfigKey] = dict((
    _key("consumer.heartbeat.interval.ms", IN, "5000",
         "The heartbeat interval given to the members of a consumer group.", at_least(1)),
    _key("consumer.session.timeout.ms", IN, "45000",
         "The timeout to detect client failures when using the consumer group protocol.",
         at_least(1)),
    _key("share.auto.offset.reset", S, "latest",
         "The strategy to initialize the share-partition start offset.",
         one_of("latest", "earliest")),
    _key("share.heartbeat.interval.ms", IN, "5000",
         "The heartbeat interval given to the members of a share group.", at_least(1)),
    _key("share.record.lock.duration.ms", IN, "30000",
         "The record acquisition lock duration in milliseconds for share groups.",
         at_least(1000)),
    _key("share.session.timeout.ms", IN, "45000",
         "The timeout to detect client failures when using the share group protocol.",
         at_least(1)),
))

#: The broker keys kcoord accepts dynamically (a subset of Kafka's AllDynamicConfigs: the
#: log, cleaner, thread-pool, connection and producer-state ones, and the listeners; not
#: ``advertised.listeners``, read-only in Kafka 4's KRaft brokers).
BROKER_KEYS: dict[str, ConfigKey] = dict((
    _key("background.threads", IN, "10", "The number of background threads.", at_least(1)),
    _key("compression.type", S, "producer", "The final compression type of topics.",
         one_of(*_COMPRESSION)),
    _key("listener.security.protocol.map", S,
         "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
         "Map between listener names and security protocols."),
    _key("listeners", S, "PLAINTEXT://:9092", "The addresses the socket server listens on."),
    _key("log.cleaner.backoff.ms", L, "15000",
         "The time to sleep when there are no logs to clean.", at_least(0)),
    _key("log.cleaner.dedupe.buffer.size", L, "134217728",
         "The memory used for log deduplication across all cleaner threads."),
    _key("log.cleaner.delete.retention.ms", L, "86400000",
         "How long delete tombstones are kept for log compacted topics.", at_least(0)),
    _key("log.cleaner.io.buffer.load.factor", D, "0.9", "Log cleaner dedupe buffer load factor."),
    _key("log.cleaner.io.buffer.size", IN, "524288",
         "The memory used for log cleaner I/O buffers.", at_least(0)),
    _key("log.cleaner.io.max.bytes.per.second", D, "1.7976931348623157E308",
         "The log cleaner's I/O throttle."),
    _key("log.cleaner.max.compaction.lag.ms", L, str(_LONG_MAX),
         "The longest a message stays ineligible for compaction.", at_least(1)),
    _key("log.cleaner.min.cleanable.ratio", D, "0.5",
         "The minimum ratio of dirty log to total log for a log to be cleaned.",
         between(0, 1)),
    _key("log.cleaner.min.compaction.lag.ms", L, "0",
         "The shortest a message stays uncompacted in the log.", at_least(0)),
    _key("log.cleaner.threads", IN, "1", "The number of log cleaner threads.", at_least(0)),
    _key("log.cleanup.policy", LI, "delete", "The default cleanup policy of segments.",
         list_of("compact", "delete")),
    _key("log.flush.interval.messages", L, str(_LONG_MAX),
         "The number of messages accumulated before they are flushed.", at_least(1)),
    _key("log.flush.interval.ms", L, None, "The longest a message stays in memory unflushed."),
    _key("log.index.interval.bytes", IN, "4096",
         "The interval with which an entry is added to the offset index.", at_least(0)),
    _key("log.index.size.max.bytes", IN, "10485760",
         "The maximum size in bytes of the offset index.", at_least(4)),
    _key("log.message.timestamp.after.max.ms", L, str(_LONG_MAX),
         "How far a message timestamp may be ahead of the broker's timestamp.", at_least(0)),
    _key("log.message.timestamp.before.max.ms", L, str(_LONG_MAX),
         "How far a message timestamp may be behind the broker's timestamp.", at_least(0)),
    _key("log.message.timestamp.type", S, "CreateTime",
         "Whether the timestamp in the message is create time or log append time.",
         one_of(*_TIMESTAMP_TYPES)),
    _key("log.preallocate", B, "false", "Whether to preallocate a file for a new segment."),
    _key("log.retention.bytes", L, "-1", "The maximum size of the log before deleting it."),
    _key("log.retention.hours", IN, "168", "Hours to keep a log file before deleting it."),
    _key("log.retention.minutes", IN, None, "Minutes to keep a log file before deleting it."),
    _key("log.retention.ms", L, None, "Milliseconds to keep a log file before deleting it."),
    _key("log.roll.hours", IN, "168", "The maximum time before a new segment is rolled out.",
         at_least(1)),
    _key("log.roll.ms", L, None, "The maximum time before a new segment is rolled out."),
    _key("log.segment.bytes", IN, "1073741824", "The maximum size of a single log file.",
         at_least(14)),
    _key("log.segment.delete.delay.ms", L, "60000",
         "The time to wait before deleting a file from the filesystem.", at_least(0)),
    _key("max.connection.creation.rate", IN, str(_INT_MAX),
         "The maximum connection creation rate allowed in the broker.", at_least(0)),
    _key("max.connections", IN, str(_INT_MAX),
         "The maximum number of connections allowed in the broker.", at_least(0)),
    _key("max.connections.per.ip", IN, str(_INT_MAX),
         "The maximum number of connections allowed from each IP address.", at_least(0)),
    _key("max.connections.per.ip.overrides", S, "",
         "Per-IP or hostname overrides of the default maximum number of connections."),
    _key("message.max.bytes", IN, "1048588",
         "The largest record batch size allowed by Kafka (after compression).", at_least(0)),
    _key("metric.reporters", LI, "", "Classes to use as metrics reporters."),
    _key("min.insync.replicas", IN, "1",
         "The minimum number of in-sync replicas a write with acks=all needs.", at_least(1)),
    _key("num.io.threads", IN, "8", "The number of threads processing requests.",
         at_least(1)),
    _key("num.network.threads", IN, "3", "The number of network threads.", at_least(1)),
    _key("num.recovery.threads.per.data.dir", IN, "2",
         "The number of threads per data directory for log recovery.", at_least(1)),
    _key("num.replica.fetchers", IN, "1", "Number of fetcher threads per source broker."),
    _key("producer.id.expiration.ms", IN, "86400000",
         "How long a producer id is kept after its last write.", at_least(1)),
    _key("transaction.partition.verification.enable", B, "true",
         "Whether to verify that a partition was added to the transaction before writing."),
    _key("unclean.leader.election.enable", B, "false",
         "Whether replicas not in the ISR may be elected leader as a last resort."),
))

#: ``DynamicBrokerConfig.PerBrokerConfigs`` among ``BROKER_KEYS``: one broker only.
PER_BROKER_KEYS = frozenset({"listeners", "listener.security.protocol.map"})


def known_keys(resource_type: int) -> Mapping[str, ConfigKey]:
    """The keys of a resource type (2 topic, 4 broker, 32 group)."""
    return {2: TOPIC_KEYS, 4: BROKER_KEYS, 32: GROUP_KEYS}.get(resource_type, {})
