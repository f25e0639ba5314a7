"""Every broker-level key kcoord knows, once: ``SERVER_PROPERTIES`` (name -> ConfigKey).

Each key says which part of kcoord reads it when the server starts (``Reader``: the group
coordinator, the transaction coordinator, the server's options, the broker surface, the
listeners, or nobody: accepted with a warning) and whether AlterConfigs may change it on a broker
(``dynamic``: a subset of Kafka's ``DynamicBrokerConfig.AllDynamicConfigs``; a dynamic key
without a reader is only known to AlterConfigs and DescribeConfigs). Types, defaults and
documentation are Kafka's (``KafkaConfig``, ``ServerLogConfigs``, ``CleanerConfig``,
``TransactionStateManagerConfig``, ``SocketServerConfigs``; ``KAFKA_DOC``: Kafka's text, kept in
``broker_docs`` and ``group_docs``); the bounds are those kcoord checks, Kafka's or stricter
where kcoord's storage needs it. Keys named ``kcoord.*`` are kcoord's own.
"""

from __future__ import annotations

from coordinator.configs.config_key import (
    INT_MAX,
    KAFKA_DOC_PREFIX,
    LONG_MAX,
    ConfigKey,
    ListOf,
    OneOf,
    Reader,
    Validator,
    at_least,
    between,
)
from coordinator.configs.security_keys import (
    AUTHORIZER_CONFIG_KEYS,
    LISTENER_ADDRESS_KEYS,
    SASL_JAAS_KEYS,
    SASL_KEYS,
    SSL_KEYS,
)
from wire.constants import MAX_TRANSACTION_VERSION, TRANSACTION_VERSION_FEATURE, ConfigType

__all__ = ["COMPRESSION_TYPES", "GROUP_COORDINATOR_KEYS", "SERVER_PROPERTIES", "TIMESTAMP_TYPES",
           "keys_read_by"]

B, S, IN, L, D, LI = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT,
                      ConfigType.LONG, ConfigType.DOUBLE, ConfigType.LIST)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_SERVER, _BROKER, _TXN, _IGNORED = Reader.SERVER, Reader.BROKER, Reader.TRANSACTIONS, Reader.IGNORED


#: A key's documentation is Kafka's own, verbatim (``broker_docs``, ``group_docs``).
KAFKA_DOC = ""


def _key(name: str, kind: ConfigType, default: str | None, doc: str,
         validator: Validator | None = None, *, dynamic: bool = False,
         reader: Reader | None = None) -> tuple[str, ConfigKey]:
    return name, ConfigKey(name, kind, default, doc or KAFKA_DOC_PREFIX + name, validator, dynamic,
                           reader)


def _ignored(name: str, kind: ConfigType, doc: str, *, dynamic: bool = False,
             default: str | None = None,
             validator: Validator | None = None) -> tuple[str, ConfigKey]:
    return _key(name, kind, default, doc, validator, dynamic=dynamic, reader=_IGNORED)


def _group(name: str, kind: ConfigType, default: str, doc: str,
           validator: Validator) -> tuple[str, ConfigKey]:
    return _key(name, kind, default, doc, validator, reader=Reader.GROUPS)


#: The group coordinator's keys (``GroupCoordinatorConfig``, ``ShareGroupConfig``,
#: ``OffsetConfig``): ``CoordinatorConfig`` is built from them.
GROUP_COORDINATOR_KEYS: dict[str, ConfigKey] = dict((
    # Classic groups and offsets.
    _group("group.min.session.timeout.ms", IN, "6000", KAFKA_DOC, at_least(0)),
    _group("group.max.session.timeout.ms", IN, "1800000", KAFKA_DOC, at_least(0)),
    _group("group.initial.rebalance.delay.ms", IN, "3000", KAFKA_DOC, at_least(0)),
    _group("group.max.size", IN, str(INT_MAX), KAFKA_DOC, at_least(1)),
    _group("offsets.retention.minutes", IN, "10080", KAFKA_DOC, at_least(1)),
    _group("offsets.retention.check.interval.ms", L, "600000", KAFKA_DOC, at_least(1)),
    _group("offset.metadata.max.bytes", IN, "4096", KAFKA_DOC, at_least(0)),
    # Share partitions and sessions (KIP-932).
    _group("group.share.delivery.count.limit", IN, "5", KAFKA_DOC, between(2, 10)),
    _group("group.share.record.lock.duration.ms", IN, "30000", KAFKA_DOC, at_least(1)),
    _group("group.share.partition.max.record.locks", IN, "2000", KAFKA_DOC, at_least(1)),
    _group("group.share.max.share.sessions", IN, "2000", KAFKA_DOC, at_least(1)),
    # The consumer group protocol (KIP-848).
    _group("group.consumer.session.timeout.ms", IN, "45000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.min.session.timeout.ms", IN, "45000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.max.session.timeout.ms", IN, "60000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.heartbeat.interval.ms", IN, "5000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.min.heartbeat.interval.ms", IN, "5000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.max.heartbeat.interval.ms", IN, "15000", KAFKA_DOC, at_least(1)),
    _group("group.consumer.max.size", IN, str(INT_MAX), KAFKA_DOC, at_least(1)),
    _group("group.consumer.assignors", LI, "uniform,range", KAFKA_DOC,
         ListOf(("uniform", "range"))),
    _group("group.consumer.migration.policy", S, "bidirectional", KAFKA_DOC,
         OneOf(("disabled", "upgrade", "downgrade", "bidirectional"))),
    _group("group.consumer.regex.refresh.interval.ms", IN, "600000", KAFKA_DOC, at_least(1)),
    _group("group.coordinator.rebalance.protocols", LI, "classic,consumer",
         "The list of enabled rebalance protocols.", ListOf(("classic", "consumer"))),
    # Share groups (KIP-932).
    _group("group.share.session.timeout.ms", IN, "45000", KAFKA_DOC, at_least(1)),
    _group("group.share.min.session.timeout.ms", IN, "45000", KAFKA_DOC, at_least(1)),
    _group("group.share.max.session.timeout.ms", IN, "60000", KAFKA_DOC, at_least(1)),
    _group("group.share.heartbeat.interval.ms", IN, "5000", KAFKA_DOC, at_least(1)),
    _group("group.share.min.heartbeat.interval.ms", IN, "5000", KAFKA_DOC, at_least(1)),
    _group("group.share.max.heartbeat.interval.ms", IN, "15000", KAFKA_DOC, at_least(1)),
    _group("group.share.max.size", IN, "200", KAFKA_DOC, between(1, 1000)),
))

_OTHER_KEYS: dict[str, ConfigKey] = dict((
    # The server's options (ServeOptions): network, cluster, files.
    _key("socket.request.max.bytes", IN, "104857600", KAFKA_DOC, at_least(1), reader=_SERVER),
    _key("connections.max.idle.ms", L, "600000", KAFKA_DOC, at_least(-1), reader=_SERVER),
    # Kafka's default is -1 (unbounded); kcoord bounds all partially received requests
    # together at twice the largest request.
    _key("queued.max.request.bytes", L, "209715200", KAFKA_DOC, at_least(-1), reader=_SERVER),
    _key("max.connections", IN, str(INT_MAX), KAFKA_DOC, at_least(0),
         dynamic=True, reader=_SERVER),
    _key("default.replication.factor", IN, "1", KAFKA_DOC, between(1, 32767),
         reader=_SERVER),
    _key("offsets.topic.num.partitions", IN, "50", KAFKA_DOC, between(1, 100_000),
         reader=_SERVER),
    _key("transaction.state.log.num.partitions", IN, "50", KAFKA_DOC, between(1, 100_000),
         reader=_SERVER),
    _key("coordinator.load.delay.ms", IN, "0",
         "How long a coordinator that just took a partition over answers "
         "COORDINATOR_LOAD_IN_PROGRESS.", between(0, 3_600_000), reader=_SERVER),
    _key("kcoord.max.open.segment.files", IN, "256",
         "The file descriptors the partition logs keep open.", at_least(1), reader=_SERVER),
    _key("socket.send.buffer.bytes", IN, "-1", KAFKA_DOC, at_least(-1),
         reader=_SERVER),
    _key("socket.send.timeout.ms", IN, "60000",
         "How long an answer may wait for its reader.", at_least(1), reader=_SERVER),
    # Twice Kafka's fetch.max.bytes default.
    _key("kcoord.queued.max.response.bytes", L, "115343360",
         "All answers being written (-1: unbounded).", at_least(-1), reader=_SERVER),
    # The broker surface (coordinator.broker.config).
    _key("auto.create.topics.enable", B, "true", KAFKA_DOC, reader=_BROKER),
    _key("num.partitions", IN, "1", KAFKA_DOC,
         at_least(1), reader=_BROKER),
    _key("message.max.bytes", IN, "1048588", KAFKA_DOC, at_least(0),
         dynamic=True, reader=_BROKER),
    _key("fetch.max.bytes", IN, "57671680", KAFKA_DOC, at_least(1024),
         reader=_BROKER),
    # The transaction coordinator (TxnConfig), validated with the broker surface's keys.
    _key("transaction.max.timeout.ms", IN, "900000", KAFKA_DOC, at_least(1), reader=_TXN),
    _key("transactional.id.expiration.ms", IN, "604800000", KAFKA_DOC, at_least(1),
         reader=_TXN),
    _key("transaction.abort.timed.out.transaction.cleanup.interval.ms", IN, "10000",
         KAFKA_DOC, at_least(1), reader=_TXN),
    _key("transaction.remove.expired.transaction.cleanup.interval.ms", IN, "3600000",
         KAFKA_DOC, at_least(1), reader=_TXN),
    # The finalized level of Kafka's transaction.version feature (Kafka 4 finalizes 2 on a
    # new cluster; Kafka sets it with kafka-features / kafka-storage format, kcoord a key).
    _key(TRANSACTION_VERSION_FEATURE, IN, str(MAX_TRANSACTION_VERSION),
         "The finalized TransactionVersion feature level.",
         between(0, MAX_TRANSACTION_VERSION), reader=_TXN),
    # Only the first key of a setting is dynamic (DynamicLogConfig: TOPIC_CONFIG_SYNONYMS'
    # values): log.retention.hours and .minutes, log.roll.hours are static.
    _key("log.retention.hours", IN, "168", KAFKA_DOC, at_least(-1), reader=_BROKER),
    _key("log.retention.minutes", IN, None, KAFKA_DOC, at_least(-1), reader=_BROKER),
    _key("log.retention.ms", L, None, KAFKA_DOC,
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.retention.bytes", L, "-1", KAFKA_DOC,
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.segment.bytes", IN, "1073741824", KAFKA_DOC,
         at_least(64), dynamic=True, reader=_BROKER),
    _key("log.retention.check.interval.ms", L, "300000", KAFKA_DOC, at_least(1), reader=_BROKER),
    _key("log.cleaner.enable", B, "true", KAFKA_DOC, reader=_BROKER),
    _key("log.cleaner.backoff.ms", L, "15000", KAFKA_DOC, at_least(0), dynamic=True,
         reader=_BROKER),
    _key("log.cleaner.dedupe.buffer.size", L, "134217728", KAFKA_DOC, at_least(0),
         dynamic=True, reader=_BROKER),
    _key("log.cleaner.delete.retention.ms", L, "86400000", KAFKA_DOC, at_least(0),
         dynamic=True, reader=_BROKER),
    _key("log.cleaner.min.compaction.lag.ms", L, "0", KAFKA_DOC, at_least(0), dynamic=True,
         reader=_BROKER),
    _key("log.cleaner.max.compaction.lag.ms", L, str(LONG_MAX),
         KAFKA_DOC, at_least(1), dynamic=True,
         reader=_BROKER),
    # Kafka keys that mean nothing for one kcoord process (cluster membership, listeners,
    # threads, replication, ZooKeeper): a real server.properties starts with a warning each.
    _ignored("broker.id", IN, KAFKA_DOC),
    _ignored("node.id", IN, KAFKA_DOC),
    _ignored("process.roles", LI, KAFKA_DOC),
    _ignored("controller.quorum.voters", LI, KAFKA_DOC),
    _ignored("controller.quorum.bootstrap.servers", LI, KAFKA_DOC),
    _ignored("controller.listener.names", LI, KAFKA_DOC),
    _ignored("inter.broker.listener.name", S, KAFKA_DOC),
    _ignored("num.network.threads", IN, KAFKA_DOC, dynamic=True,
             default="3", validator=at_least(1)),
    _ignored("num.io.threads", IN, KAFKA_DOC,
             dynamic=True, default="8", validator=at_least(1)),
    _ignored("num.replica.fetchers", IN, KAFKA_DOC,
             dynamic=True, default="1"),
    _ignored("socket.receive.buffer.bytes", IN, KAFKA_DOC),
    _ignored("log.dirs", S, KAFKA_DOC),
    _ignored("log.dir", S, KAFKA_DOC),
    _ignored("num.recovery.threads.per.data.dir", IN, KAFKA_DOC, dynamic=True,
             default="2", validator=at_least(1)),
    _ignored("offsets.topic.replication.factor", ConfigType.SHORT, KAFKA_DOC),
    _ignored("transaction.state.log.replication.factor", ConfigType.SHORT, KAFKA_DOC),
    _ignored("transaction.state.log.min.isr", IN, KAFKA_DOC),
    _ignored("share.coordinator.state.topic.replication.factor", ConfigType.SHORT, KAFKA_DOC),
    _ignored("share.coordinator.state.topic.min.isr", ConfigType.SHORT, KAFKA_DOC),
    _ignored("min.insync.replicas", IN, KAFKA_DOC,
             dynamic=True, default="1", validator=at_least(1)),
    _ignored("unclean.leader.election.enable", B, KAFKA_DOC, dynamic=True, default="false"),
    _ignored("delete.topic.enable", B, KAFKA_DOC),
    _ignored("log.flush.interval.messages", L, KAFKA_DOC, dynamic=True,
             default=str(LONG_MAX), validator=at_least(1)),
    _ignored("log.flush.interval.ms", L, KAFKA_DOC,
             dynamic=True),
    _ignored("zookeeper.connect", S, "ZooKeeper's address (not in Kafka 4)."),
    _ignored("zookeeper.connection.timeout.ms", IN, "ZooKeeper's timeout (not in Kafka 4)."),
    _ignored("metadata.log.dir", S, KAFKA_DOC),
    _ignored("auto.leader.rebalance.enable", B, KAFKA_DOC),
    _ignored("replica.lag.time.max.ms", L, KAFKA_DOC),
    # The listeners, SASL, TLS and authorizer keys (``security_keys``).
    *LISTENER_ADDRESS_KEYS.items(),
    *AUTHORIZER_CONFIG_KEYS.items(),
    *SASL_KEYS.items(),
    *SASL_JAAS_KEYS.items(),
    *SSL_KEYS.items(),
    # Dynamic: only AlterConfigs and DescribeConfigs know them, the static config does not.
    _key("background.threads", IN, "10", KAFKA_DOC, at_least(1),
         dynamic=True),
    _key("compression.type", S, "producer", KAFKA_DOC,
         OneOf(COMPRESSION_TYPES), dynamic=True),
    _key("log.cleaner.io.buffer.load.factor", D, "0.9", KAFKA_DOC, dynamic=True),
    _key("log.cleaner.io.buffer.size", IN, "524288", KAFKA_DOC, at_least(0), dynamic=True),
    _key("log.cleaner.io.max.bytes.per.second", D, "1.7976931348623157E308",
         KAFKA_DOC, dynamic=True),
    _key("log.cleaner.min.cleanable.ratio", D, "0.5", KAFKA_DOC, between(0, 1), dynamic=True),
    _key("log.cleaner.threads", IN, "1", KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("log.cleanup.policy", LI, "delete", KAFKA_DOC,
         ListOf(("compact", "delete")), dynamic=True),
    _key("log.index.interval.bytes", IN, "4096", KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("log.index.size.max.bytes", IN, "10485760", KAFKA_DOC, at_least(4), dynamic=True),
    _key("log.message.timestamp.after.max.ms", L, str(LONG_MAX), KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("log.message.timestamp.before.max.ms", L, str(LONG_MAX), KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("log.message.timestamp.type", S, "CreateTime", KAFKA_DOC,
         OneOf(TIMESTAMP_TYPES), dynamic=True),
    _key("log.preallocate", B, "false", KAFKA_DOC,
         dynamic=True),
    _key("log.roll.hours", IN, "168", KAFKA_DOC, at_least(1)),
    _key("log.roll.ms", L, None, KAFKA_DOC,
         dynamic=True),
    _key("log.segment.delete.delay.ms", L, "60000", KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("max.connection.creation.rate", IN, str(INT_MAX), KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("max.connections.per.ip", IN, str(INT_MAX), KAFKA_DOC, at_least(0),
         dynamic=True),
    _key("max.connections.per.ip.overrides", S, "", KAFKA_DOC, dynamic=True),
    _key("metric.reporters", LI, "", KAFKA_DOC, dynamic=True),
    _key("producer.id.expiration.ms", IN, "86400000", KAFKA_DOC, at_least(1), dynamic=True),
    _key("transaction.partition.verification.enable", B, "true", KAFKA_DOC, dynamic=True),
))

#: Every broker-level key kcoord knows (the module docstring).
SERVER_PROPERTIES: dict[str, ConfigKey] = {**GROUP_COORDINATOR_KEYS, **_OTHER_KEYS}
assert len(SERVER_PROPERTIES) == len(GROUP_COORDINATOR_KEYS) + len(_OTHER_KEYS)


def keys_read_by(*readers: Reader) -> dict[str, ConfigKey]:
    """The keys that ``readers`` read at startup, in definition order."""
    return {name: key for name, key in SERVER_PROPERTIES.items() if key.reader in readers}
