"""Every broker-level key kcoord knows, once: ``SERVER_PROPERTIES`` (name -> ConfigKey).

Each key says which part of kcoord reads it when the server starts (``Reader``: the group
coordinator, the transaction coordinator, the server's options, the broker surface, the
listeners, or nobody: accepted with a warning) and whether AlterConfigs may change it on a broker
(``dynamic``: a subset of Kafka's ``DynamicBrokerConfig.AllDynamicConfigs``; a dynamic key
without a reader is only known to AlterConfigs and DescribeConfigs). Types, defaults and
documentation are Kafka's (``KafkaConfig``, ``ServerLogConfigs``, ``CleanerConfig``,
``TransactionStateManagerConfig``, ``SocketServerConfigs``); the bounds are those kcoord
checks, Kafka's or stricter where kcoord's storage needs it. Keys named ``kcoord.*`` are
kcoord's own.
"""

from __future__ import annotations

from coordinator.configs.config_key import (
    INT_MAX,
    LONG_MAX,
    ConfigKey,
    ListOf,
    OneOf,
    Reader,
    Validator,
    at_least,
    between,
)
from wire.constants import MAX_TRANSACTION_VERSION, TRANSACTION_VERSION_FEATURE, ConfigType

__all__ = ["COMPRESSION_TYPES", "GROUP_COORDINATOR_KEYS", "SERVER_PROPERTIES", "TIMESTAMP_TYPES",
           "keys_read_by"]

B, S, IN, L, D, LI, P = (ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT,
                         ConfigType.LONG, ConfigType.DOUBLE, ConfigType.LIST,
                         ConfigType.PASSWORD)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_SERVER, _BROKER, _TXN, _IGNORED = Reader.SERVER, Reader.BROKER, Reader.TRANSACTIONS, Reader.IGNORED


def _key(name: str, kind: ConfigType, default: str | None, doc: str,
         validator: Validator | None = None, *, dynamic: bool = False,
         reader: Reader | None = None) -> tuple[str, ConfigKey]:
    return name, ConfigKey(name, kind, default, doc, validator, dynamic, reader)


def _ignored(name: str, kind: ConfigType, doc: str, *, dynamic: bool = False,
             default: str | None = None,
             validator: Validator | None = None) -> tuple[str, ConfigKey]:
    return _key(name, kind, default, doc, validator, dynamic=dynamic, reader=_IGNORED)


def _listener(name: str, kind: ConfigType, doc: str) -> tuple[str, ConfigKey]:
    return _key(name, kind, None, doc, reader=Reader.LISTENERS)


def _group(name: str, kind: ConfigType, default: str, doc: str,
           validator: Validator) -> tuple[str, ConfigKey]:
    return _key(name, kind, default, doc, validator, reader=Reader.GROUPS)


#: The group coordinator's keys (``GroupCoordinatorConfig``, ``ShareGroupConfig``,
#: ``OffsetConfig``): ``CoordinatorConfig`` is built from them.
GROUP_COORDINATOR_KEYS: dict[str, ConfigKey] = dict((
    # Classic groups and offsets.
    _group("group.min.session.timeout.ms", IN, "6000",
         "The minimum allowed session timeout for registered consumers.", at_least(0)),
    _group("group.max.session.timeout.ms", IN, "1800000",
         "The maximum allowed session timeout for registered consumers.", at_least(0)),
    _group("group.initial.rebalance.delay.ms", IN, "3000",
         "How long the coordinator waits for more members to join a new group.", at_least(0)),
    _group("group.max.size", IN, str(INT_MAX),
         "The maximum number of consumers that a single consumer group can accommodate.",
         at_least(1)),
    _group("offsets.retention.minutes", IN, "10080",
         "How long committed offsets of a group without members are kept.", at_least(1)),
    _group("offsets.retention.check.interval.ms", L, "600000",
         "Frequency at which to check for stale offsets.", at_least(1)),
    _group("offset.metadata.max.bytes", IN, "4096",
         "The maximum size for a metadata entry associated with an offset commit.",
         at_least(0)),
    # Share partitions and sessions (KIP-932).
    _group("group.share.delivery.count.limit", IN, "5",
         "The maximum number of delivery attempts for a record delivered to a share group.",
         between(2, 10)),
    _group("group.share.record.lock.duration.ms", IN, "30000",
         "The record acquisition lock duration in milliseconds for share groups.",
         at_least(1)),
    _group("group.share.partition.max.record.locks", IN, "2000",
         "Share-group record lock limit per share-partition.", at_least(1)),
    _group("group.share.max.share.sessions", IN, "2000",
         "The maximum number of share sessions per broker.", at_least(1)),
    # The consumer group protocol (KIP-848).
    _group("group.consumer.session.timeout.ms", IN, "45000",
         "The timeout to detect client failures when using the consumer group protocol.",
         at_least(1)),
    _group("group.consumer.min.session.timeout.ms", IN, "45000",
         "The minimum allowed session timeout for registered consumers.", at_least(1)),
    _group("group.consumer.max.session.timeout.ms", IN, "60000",
         "The maximum allowed session timeout for registered consumers.", at_least(1)),
    _group("group.consumer.heartbeat.interval.ms", IN, "5000",
         "The heartbeat interval given to the members of a consumer group.", at_least(1)),
    _group("group.consumer.min.heartbeat.interval.ms", IN, "5000",
         "The minimum heartbeat interval for registered consumers.", at_least(1)),
    _group("group.consumer.max.heartbeat.interval.ms", IN, "15000",
         "The maximum heartbeat interval for registered consumers.", at_least(1)),
    _group("group.consumer.max.size", IN, str(INT_MAX),
         "The maximum number of consumers that a single consumer group can accommodate.",
         at_least(1)),
    _group("group.consumer.assignors", LI, "uniform,range",
         "The server-side assignors; the first one is used by default.",
         ListOf(("uniform", "range"))),
    _group("group.consumer.migration.policy", S, "bidirectional",
         "The config that enables converting between the classic and the consumer group.",
         OneOf(("disabled", "upgrade", "downgrade", "bidirectional"))),
    _group("group.consumer.regex.refresh.interval.ms", IN, "600000",
         "The interval at which the group coordinator refreshes regular expressions.",
         at_least(1)),
    _group("group.coordinator.rebalance.protocols", LI, "classic,consumer",
         "The list of enabled rebalance protocols.", ListOf(("classic", "consumer"))),
    # Share groups (KIP-932).
    _group("group.share.session.timeout.ms", IN, "45000",
         "The timeout to detect client failures when using the share group protocol.",
         at_least(1)),
    _group("group.share.min.session.timeout.ms", IN, "45000",
         "The minimum allowed session timeout for share group members.", at_least(1)),
    _group("group.share.max.session.timeout.ms", IN, "60000",
         "The maximum allowed session timeout for share group members.", at_least(1)),
    _group("group.share.heartbeat.interval.ms", IN, "5000",
         "The heartbeat interval given to the members of a share group.", at_least(1)),
    _group("group.share.min.heartbeat.interval.ms", IN, "5000",
         "The minimum heartbeat interval for share group members.", at_least(1)),
    _group("group.share.max.heartbeat.interval.ms", IN, "15000",
         "The maximum heartbeat interval for share group members.", at_least(1)),
    _group("group.share.max.size", IN, "200",
         "The maximum number of members that a single share group can accommodate.",
         between(1, 1000)),
))

_OTHER_KEYS: dict[str, ConfigKey] = dict((
    # The server's options (ServeOptions): network, cluster, files.
    _key("socket.request.max.bytes", IN, "104857600",
         "The maximum number of bytes in a socket request.", at_least(1), reader=_SERVER),
    _key("connections.max.idle.ms", L, "600000",
         "Idle connections timeout: connections idle longer than this are closed.",
         at_least(-1), reader=_SERVER),
    # Kafka's default is -1 (unbounded); kcoord bounds all partially received requests
    # together at twice the largest request.
    _key("queued.max.request.bytes", L, "209715200",
         "The number of queued bytes allowed before no more requests are read.",
         at_least(-1), reader=_SERVER),
    _key("max.connections", IN, str(INT_MAX),
         "The maximum number of connections allowed in the broker.", at_least(0),
         dynamic=True, reader=_SERVER),
    _key("default.replication.factor", IN, "1",
         "The replication factor for automatically created topics.", between(1, 32767),
         reader=_SERVER),
    _key("offsets.topic.num.partitions", IN, "50",
         "The number of partitions for the offset commit topic.", between(1, 100_000),
         reader=_SERVER),
    _key("transaction.state.log.num.partitions", IN, "50",
         "The number of partitions for the transaction topic.", between(1, 100_000),
         reader=_SERVER),
    _key("coordinator.load.delay.ms", IN, "0",
         "How long a coordinator that just took a partition over answers "
         "COORDINATOR_LOAD_IN_PROGRESS.", between(0, 3_600_000), reader=_SERVER),
    _key("kcoord.max.open.segment.files", IN, "256",
         "The file descriptors the partition logs keep open.", at_least(1), reader=_SERVER),
    _key("socket.send.buffer.bytes", IN, "-1",
         "The SO_SNDBUF buffer of each connection (-1: the OS default).", at_least(-1),
         reader=_SERVER),
    _key("socket.send.timeout.ms", IN, "60000",
         "How long an answer may wait for its reader.", at_least(1), reader=_SERVER),
    # Twice Kafka's fetch.max.bytes default.
    _key("kcoord.queued.max.response.bytes", L, "115343360",
         "All answers being written (-1: unbounded).", at_least(-1), reader=_SERVER),
    # The broker surface (coordinator.broker.config).
    _key("auto.create.topics.enable", B, "true",
         "Enable auto creation of topic on the server.", reader=_BROKER),
    _key("num.partitions", IN, "1", "The default number of log partitions per topic.",
         at_least(1), reader=_BROKER),
    _key("message.max.bytes", IN, "1048588",
         "The largest record batch size allowed by Kafka (after compression).", at_least(0),
         dynamic=True, reader=_BROKER),
    _key("fetch.max.bytes", IN, "57671680",
         "The maximum number of bytes we will return for a fetch request.", at_least(1024),
         reader=_BROKER),
    # The transaction coordinator (TxnConfig), validated with the broker surface's keys.
    _key("transaction.max.timeout.ms", IN, "900000",
         "The maximum allowed timeout for transactions.", at_least(1), reader=_TXN),
    _key("transactional.id.expiration.ms", IN, "604800000",
         "How long a transactional id is kept without a status update.", at_least(1),
         reader=_TXN),
    _key("transaction.abort.timed.out.transaction.cleanup.interval.ms", IN, "10000",
         "The interval at which to roll back transactions that have timed out.", at_least(1),
         reader=_TXN),
    _key("transaction.remove.expired.transaction.cleanup.interval.ms", IN, "3600000",
         "The interval at which to remove transactions that have expired.", at_least(1),
         reader=_TXN),
    # The finalized level of Kafka's transaction.version feature (Kafka 4 finalizes 2 on a
    # new cluster; Kafka sets it with kafka-features / kafka-storage format, kcoord a key).
    _key(TRANSACTION_VERSION_FEATURE, IN, str(MAX_TRANSACTION_VERSION),
         "The finalized TransactionVersion feature level.",
         between(0, MAX_TRANSACTION_VERSION), reader=_TXN),
    _key("log.retention.hours", IN, "168", "Hours to keep a log file before deleting it.",
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.retention.minutes", IN, None, "Minutes to keep a log file before deleting it.",
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.retention.ms", L, None, "Milliseconds to keep a log file before deleting it.",
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.retention.bytes", L, "-1", "The maximum size of the log before deleting it.",
         at_least(-1), dynamic=True, reader=_BROKER),
    _key("log.segment.bytes", IN, "1073741824", "The maximum size of a single log file.",
         at_least(64), dynamic=True, reader=_BROKER),
    _key("log.retention.check.interval.ms", L, "300000",
         "How often the log cleaner checks whether any log is eligible for deletion.",
         at_least(1), reader=_BROKER),
    _key("log.cleaner.enable", B, "true",
         "Enable the log cleaner process to run on the server.", reader=_BROKER),
    _key("log.cleaner.backoff.ms", L, "15000",
         "The time to sleep when there are no logs to clean.", at_least(0), dynamic=True,
         reader=_BROKER),
    _key("log.cleaner.dedupe.buffer.size", L, "134217728",
         "The memory used for log deduplication across all cleaner threads.", at_least(0),
         dynamic=True, reader=_BROKER),
    _key("log.cleaner.delete.retention.ms", L, "86400000",
         "How long delete tombstones are kept for log compacted topics.", at_least(0),
         dynamic=True, reader=_BROKER),
    _key("log.cleaner.min.compaction.lag.ms", L, "0",
         "The shortest a message stays uncompacted in the log.", at_least(0), dynamic=True,
         reader=_BROKER),
    _key("log.cleaner.max.compaction.lag.ms", L, str(LONG_MAX),
         "The longest a message stays ineligible for compaction.", at_least(1), dynamic=True,
         reader=_BROKER),
    # Kafka keys that mean nothing for one kcoord process (cluster membership, listeners,
    # threads, replication, ZooKeeper): a real server.properties starts with a warning each.
    _ignored("broker.id", IN, "The broker id for this server."),
    _ignored("node.id", IN, "The node id of the roles this process plays."),
    _ignored("process.roles", LI, "The roles that this process plays."),
    _ignored("controller.quorum.voters", LI, "The controller quorum's voters."),
    _ignored("controller.quorum.bootstrap.servers", LI, "The controller quorum's endpoints."),
    _ignored("controller.listener.names", LI, "The listeners the controller uses."),
    _ignored("inter.broker.listener.name", S, "The listener brokers talk to each other on."),
    _ignored("num.network.threads", IN, "The number of network threads.", dynamic=True,
             default="3", validator=at_least(1)),
    _ignored("num.io.threads", IN, "The number of threads processing requests.",
             dynamic=True, default="8", validator=at_least(1)),
    _ignored("num.replica.fetchers", IN, "Number of fetcher threads per source broker.",
             dynamic=True, default="1"),
    _ignored("socket.receive.buffer.bytes", IN, "The SO_RCVBUF buffer of the sockets."),
    _ignored("log.dirs", S, "The directories in which the log data is kept."),
    _ignored("log.dir", S, "The directory in which the log data is kept."),
    _ignored("num.recovery.threads.per.data.dir", IN,
             "The number of threads per data directory for log recovery.", dynamic=True,
             default="2", validator=at_least(1)),
    _ignored("offsets.topic.replication.factor", ConfigType.SHORT,
             "The replication factor for the offsets topic."),
    _ignored("transaction.state.log.replication.factor", ConfigType.SHORT,
             "The replication factor for the transaction topic."),
    _ignored("transaction.state.log.min.isr", IN, "The transaction topic's min.insync.replicas."),
    _ignored("share.coordinator.state.topic.replication.factor", ConfigType.SHORT,
             "The replication factor for the share-group state topic."),
    _ignored("share.coordinator.state.topic.min.isr", ConfigType.SHORT,
             "The share-group state topic's min.insync.replicas."),
    _ignored("min.insync.replicas", IN,
             "The minimum number of in-sync replicas a write with acks=all needs.",
             dynamic=True, default="1", validator=at_least(1)),
    _ignored("unclean.leader.election.enable", B,
             "Whether replicas not in the ISR may be elected leader as a last resort.",
             dynamic=True, default="false"),
    _ignored("delete.topic.enable", B, "Enables delete topic."),
    _ignored("log.flush.interval.messages", L,
             "The number of messages accumulated before they are flushed.", dynamic=True,
             default=str(LONG_MAX), validator=at_least(1)),
    _ignored("log.flush.interval.ms", L, "The longest a message stays in memory unflushed.",
             dynamic=True),
    _ignored("zookeeper.connect", S, "ZooKeeper's address (not in Kafka 4)."),
    _ignored("zookeeper.connection.timeout.ms", IN, "ZooKeeper's timeout (not in Kafka 4)."),
    _ignored("metadata.log.dir", S, "The directory of the cluster's metadata log."),
    _ignored("auto.leader.rebalance.enable", B, "Enables auto leader balancing."),
    _ignored("replica.lag.time.max.ms", L, "How long a follower may lag behind the leader."),
    # Dynamic (not advertised.listeners, read-only in Kafka 4's KRaft brokers); but for the
    # listeners, only AlterConfigs and DescribeConfigs know them, the static config does not.
    _key("background.threads", IN, "10", "The number of background threads.", at_least(1),
         dynamic=True),
    _key("compression.type", S, "producer", "The final compression type of topics.",
         OneOf(COMPRESSION_TYPES), dynamic=True),
    _key("listener.security.protocol.map", S,
         "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
         "Map between listener names and security protocols.", dynamic=True,
         reader=Reader.LISTENERS),
    _key("listeners", S, "PLAINTEXT://:9092", "The addresses the socket server listens on.",
         dynamic=True, reader=Reader.LISTENERS),
    # Read-only here: a listener's address, SASL and TLS keys (``listener.name.<name>.``
    # prefixed or not: DescribeConfigs reads a prefixed key's type and doc from its base key).
    _key("authorizer.class.name", S, "",
         "The fully qualified name of a class that implements the Authorizer interface, "
         "which is used by the broker for authorization.", reader=Reader.AUTHORIZER),
    _listener("advertised.listeners", S,
              "The listeners to publish for clients to use, if different from listeners."),
    _listener("sasl.enabled.mechanisms", LI, "The SASL mechanisms enabled in the server."),
    _listener("connections.max.reauth.ms", L,
              "The maximum time between re-authentications of a SASL connection (0: never)."),
    _listener("sasl.jaas.config", P,
              "The JAAS login context parameters for SASL connections."),
    _listener("ssl.keystore.type", S, "The file format of the key store file."),
    _listener("ssl.keystore.location", S, "The location of the key store file."),
    _listener("ssl.keystore.password", P, "The store password for the key store file."),
    _listener("ssl.keystore.certificate.chain", P,
              "The certificate chain in the format specified by ssl.keystore.type."),
    _listener("ssl.keystore.key", P,
              "The private key in the format specified by ssl.keystore.type."),
    _listener("ssl.key.password", P, "The password of the private key in the key store."),
    _listener("ssl.truststore.type", S, "The file format of the trust store file."),
    _listener("ssl.truststore.location", S, "The location of the trust store file."),
    _listener("ssl.truststore.password", P, "The password for the trust store file."),
    _listener("ssl.truststore.certificates", P,
              "The trusted certificates in the format specified by ssl.truststore.type."),
    _listener("ssl.client.auth", S,
              "Whether the server requests client authentication: required, requested or none."),
    _listener("ssl.enabled.protocols", LI,
              "The list of protocols enabled for SSL connections."),
    _listener("ssl.endpoint.identification.algorithm", S,
              "The endpoint identification algorithm to validate the server hostname."),
    _key("log.cleaner.io.buffer.load.factor", D, "0.9",
         "Log cleaner dedupe buffer load factor.", dynamic=True),
    _key("log.cleaner.io.buffer.size", IN, "524288",
         "The memory used for log cleaner I/O buffers.", at_least(0), dynamic=True),
    _key("log.cleaner.io.max.bytes.per.second", D, "1.7976931348623157E308",
         "The log cleaner's I/O throttle.", dynamic=True),
    _key("log.cleaner.min.cleanable.ratio", D, "0.5",
         "The minimum ratio of dirty log to total log for a log to be cleaned.",
         between(0, 1), dynamic=True),
    _key("log.cleaner.threads", IN, "1", "The number of log cleaner threads.", at_least(0),
         dynamic=True),
    _key("log.cleanup.policy", LI, "delete", "The default cleanup policy of segments.",
         ListOf(("compact", "delete")), dynamic=True),
    _key("log.index.interval.bytes", IN, "4096",
         "The interval with which an entry is added to the offset index.", at_least(0),
         dynamic=True),
    _key("log.index.size.max.bytes", IN, "10485760",
         "The maximum size in bytes of the offset index.", at_least(4), dynamic=True),
    _key("log.message.timestamp.after.max.ms", L, str(LONG_MAX),
         "How far a message timestamp may be ahead of the broker's timestamp.", at_least(0),
         dynamic=True),
    _key("log.message.timestamp.before.max.ms", L, str(LONG_MAX),
         "How far a message timestamp may be behind the broker's timestamp.", at_least(0),
         dynamic=True),
    _key("log.message.timestamp.type", S, "CreateTime",
         "Whether the timestamp in the message is create time or log append time.",
         OneOf(TIMESTAMP_TYPES), dynamic=True),
    _key("log.preallocate", B, "false", "Whether to preallocate a file for a new segment.",
         dynamic=True),
    _key("log.roll.hours", IN, "168", "The maximum time before a new segment is rolled out.",
         at_least(1), dynamic=True),
    _key("log.roll.ms", L, None, "The maximum time before a new segment is rolled out.",
         dynamic=True),
    _key("log.segment.delete.delay.ms", L, "60000",
         "The time to wait before deleting a file from the filesystem.", at_least(0),
         dynamic=True),
    _key("max.connection.creation.rate", IN, str(INT_MAX),
         "The maximum connection creation rate allowed in the broker.", at_least(0),
         dynamic=True),
    _key("max.connections.per.ip", IN, str(INT_MAX),
         "The maximum number of connections allowed from each IP address.", at_least(0),
         dynamic=True),
    _key("max.connections.per.ip.overrides", S, "",
         "Per-IP or hostname overrides of the default maximum number of connections.",
         dynamic=True),
    _key("metric.reporters", LI, "", "Classes to use as metrics reporters.", dynamic=True),
    _key("producer.id.expiration.ms", IN, "86400000",
         "How long a producer id is kept after its last write.", at_least(1), dynamic=True),
    _key("transaction.partition.verification.enable", B, "true",
         "Whether to verify that a partition was added to the transaction before writing.",
         dynamic=True),
))

#: Every broker-level key kcoord knows (the module docstring).
SERVER_PROPERTIES: dict[str, ConfigKey] = {**GROUP_COORDINATOR_KEYS, **_OTHER_KEYS}
assert len(SERVER_PROPERTIES) == len(GROUP_COORDINATOR_KEYS) + len(_OTHER_KEYS)


def keys_read_by(*readers: Reader) -> dict[str, ConfigKey]:
    """The keys that ``readers`` read at startup, in definition order."""
    return {name: key for name, key in SERVER_PROPERTIES.items() if key.reader in readers}
