"""Kafka's documentation of the broker keys other than the group coordinator's, as
DescribeConfigs v3+ returns it with ``include_documentation``: the ``*_DOC`` constants of
``ServerLogConfigs``, ``CleanerConfig``, ``ServerConfigs``, ``SocketServerConfigs``,
``KRaftConfigs``, ``ReplicationConfigs``, ``TransactionLogConfig``,
``TransactionStateManagerConfig``, ``ShareCoordinatorConfig``, ``MetricConfigs``,
``BrokerSecurityConfigs``, ``SslConfigs`` and ``QuorumConfig``, verbatim (HTML, and the
literal ``%n`` some of Kafka's carry). Keys Kafka does not define (``kcoord.*``) or whose
text could not be taken from Kafka keep kcoord's own in ``broker_keys``."""

from __future__ import annotations

__all__ = ["BROKER_DOCS"]

#: Broker key -> its documentation.
BROKER_DOCS: dict[str, str] = {
    "advertised.listeners": (
        "Listeners to publish to ZooKeeper for clients to use, if different than the "
        "<code>listeners</code> config property. In IaaS environments, this may need to be "
        "different from the interface to which the broker binds. If this is not set, the value "
        "for <code>listeners</code> will be used. Unlike <code>listeners</code>, it is not "
        "valid to advertise the 0.0.0.0 meta-address.\n Also unlike <code>listeners</code>, "
        "there can be duplicated ports in this property, so that one listener can be configured "
        "to advertise another listener's address. This can be useful in some cases where "
        "external load balancers are used."),
    "authorizer.class.name": (
        "The fully qualified name of a class that implements "
        "<code>org.apache.kafka.server.authorizer.Authorizer</code> interface, which is used by "
        "the broker for authorization."),
    "auto.create.topics.enable": "Enable auto creation of topic on the server.",
    "auto.leader.rebalance.enable": (
        "Enables auto leader balancing. A background thread checks the distribution of "
        "partition leaders at regular intervals, configurable by "
        "leader.imbalance.check.interval.seconds. If the leader imbalance exceeds "
        "leader.imbalance.per.broker.percentage, leader rebalance to the preferred leader for "
        "partitions is triggered."),
    "background.threads": "The number of threads to use for various background processing tasks",
    "broker.id": (
        "The broker id for this server. If unset, a unique broker id will be generated.To avoid "
        "conflicts between ZooKeeper generated broker id's and user configured broker id's, "
        "generated broker ids start from reserved.broker.max.id + 1."),
    "compression.type": (
        "Specify the final compression type for a given topic. This configuration accepts the "
        "standard compression codecs ('gzip', 'snappy', 'lz4', 'zstd'). It additionally accepts "
        "'uncompressed' which is equivalent to no compression; and 'producer' which means "
        "retain the original compression codec set by the producer."),
    "connections.max.idle.ms": (
        "Idle connections timeout: the server socket processor threads close the connections "
        "that idle more than this"),
    "connections.max.reauth.ms": (
        "When explicitly set to a positive number (the default is 0, not a positive number), a "
        "session lifetime that will not exceed the configured value will be communicated to "
        "v2.2.0 or later clients when they authenticate. The broker will disconnect any such "
        "connection that is not re-authenticated within the session lifetime and that is then "
        "subsequently used for any purpose other than re-authentication. Configuration names "
        "can optionally be prefixed with listener prefix and SASL mechanism name in lower-case. "
        "For example, listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=3600000"),
    "controller.listener.names": (
        "A comma-separated list of the names of the listeners used by the controller. This is "
        "required if running in KRaft mode. When communicating with the controller quorum, the "
        "broker will always use the first listener in this list.\n Note: The ZooKeeper-based "
        "controller should not set this configuration."),
    "default.replication.factor": (
        "The replication factor for automatically created topics, and for topics created with "
        "-1 as the replication factor"),
    "controller.quorum.bootstrap.servers": (
        "List of endpoints to use for bootstrapping the cluster metadata. The endpoints are "
        "specified in comma-separated list of <code>{host}:{port}</code> entries. For example: "
        "<code>localhost:9092,localhost:9093,localhost:9094</code>."),
    "controller.quorum.voters": (
        "Map of id/endpoint information for the set of voters in a comma-separated list of "
        "<code>{id}@{host}:{port}</code> entries. For example: "
        "<code>1@localhost:9092,2@localhost:9093,3@localhost:9094</code>"),
    "delete.topic.enable": (
        "Enables delete topic. Delete topic through the admin tool will have no effect if this "
        "config is turned off"),
    "fetch.max.bytes": (
        "The maximum number of bytes we will return for a fetch request. Must be at least 1024."),
    "inter.broker.listener.name": (
        "Name of listener used for communication between brokers. If this is unset, the "
        "listener name is defined by security.inter.broker.protocol. It is an error to set this "
        "and security.inter.broker.protocol properties at the same time."),
    "listener.security.protocol.map": (
        "Map between listener names and security protocols. This must be defined for the same "
        "security protocol to be usable in more than one port or IP. For example, internal and "
        "external traffic can be separated even if SSL is required for both. Concretely, the "
        "user could define listeners with names INTERNAL and EXTERNAL and this property as: "
        "<code>INTERNAL:SSL,EXTERNAL:SSL</code>. As shown, key and value are separated by a "
        "colon and map entries are separated by commas. Each listener name should only appear "
        "once in the map. Different security (SSL and SASL) settings can be configured for each "
        "listener by adding a normalised prefix (the listener name is lowercased) to the config "
        "name. For example, to set a different keystore for the INTERNAL listener, a config "
        "with name <code>listener.name.internal.ssl.keystore.location</code> would be set. If "
        "the config for the listener name is not set, the config will fallback to the generic "
        "config (i.e. <code>ssl.keystore.location</code>). Note that in KRaft a default mapping "
        "from the listener names defined by <code>controller.listener.names</code> to PLAINTEXT "
        "is assumed if no explicit mapping is provided and no other security protocol is in use."),
    "listeners": (
        "Listener List - Comma-separated list of URIs we will listen on and the listener names. "
        "If the listener name is not a security protocol, "
        "<code>listener.security.protocol.map</code> must also be set.\n Listener names and "
        "port numbers must be unique unless %n one listener is an IPv4 address and the other "
        "listener is %n an IPv6 address (for the same port).%n Specify hostname as 0.0.0.0 to "
        "bind to all interfaces.%n Leave hostname empty to bind to default interface.%n "
        "Examples of legal listener lists:%n <code>PLAINTEXT://myhost:9092,SSL://:9091</code>%n "
        "<code>CLIENT://0.0.0.0:9092,REPLICATION://localhost:9093</code>%n "
        "<code>PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092</code>%n"),
    "log.cleaner.backoff.ms": "The amount of time to sleep when there are no logs to clean",
    "log.cleaner.dedupe.buffer.size": (
        "The total memory used for log deduplication across all cleaner threads"),
    "log.cleaner.delete.retention.ms": (
        "The amount of time to retain tombstone message markers for log compacted topics. This "
        "setting also gives a bound on the time in which a consumer must complete a read if "
        "they begin from offset 0 to ensure that they get a valid snapshot of the final stage "
        "(otherwise  tombstones messages may be collected before a consumer completes their "
        "scan)."),
    "log.cleaner.enable": (
        "Enable the log cleaner process to run on the server. Should be enabled if using any "
        "topics with a cleanup.policy=compact including the internal offsets topic. If disabled "
        "those topics will not be compacted and continually grow in size."),
    "log.cleaner.io.buffer.load.factor": (
        "Log cleaner dedupe buffer load factor. The percentage full the dedupe buffer can "
        "become. A higher value will allow more log to be cleaned at once but will lead to more "
        "hash collisions"),
    "log.cleaner.io.buffer.size": (
        "The total memory used for log cleaner I/O buffers across all cleaner threads"),
    "log.cleaner.io.max.bytes.per.second": (
        "The log cleaner will be throttled so that the sum of its read and write i/o will be "
        "less than this value on average"),
    "log.cleaner.max.compaction.lag.ms": (
        "The maximum time a message will remain ineligible for compaction in the log. Only "
        "applicable for logs that are being compacted."),
    "log.cleaner.min.cleanable.ratio": (
        "The minimum ratio of dirty log to total log for a log to eligible for cleaning. If the "
        "log.cleaner.max.compaction.lag.ms or the log.cleaner.min.compaction.lag.ms "
        "configurations are also specified, then the log compactor considers the log eligible "
        "for compaction as soon as either: (i) the dirty ratio threshold has been met and the "
        "log has had dirty (uncompacted) records for at least the "
        "log.cleaner.min.compaction.lag.ms duration, or (ii) if the log has had dirty "
        "(uncompacted) records for at most the log.cleaner.max.compaction.lag.ms period."),
    "log.cleaner.min.compaction.lag.ms": (
        "The minimum time a message will remain uncompacted in the log. Only applicable for "
        "logs that are being compacted."),
    "log.cleaner.threads": "The number of background threads to use for log cleaning",
    "log.cleanup.policy": (
        "The default cleanup policy for segments beyond the retention window. A comma separated "
        "list of valid policies. Valid policies are: \"delete\" and \"compact\""),
    "log.dir": "The directory in which the log data is kept (supplemental for log.dirs property)",
    "log.dirs": (
        "A comma-separated list of the directories where the log data is stored. If not set, "
        "the value in log.dir is used."),
    "log.flush.interval.messages": (
        "The number of messages accumulated on a log partition before messages are flushed to "
        "disk."),
    "log.flush.interval.ms": (
        "The maximum time in ms that a message in any topic is kept in memory before flushed to "
        "disk. If not set, the value in log.flush.scheduler.interval.ms is used"),
    "log.index.interval.bytes": "The interval with which we add an entry to the offset index.",
    "log.index.size.max.bytes": "The maximum size in bytes of the offset index",
    "log.message.timestamp.after.max.ms": (
        "This configuration sets the allowable timestamp difference between the message "
        "timestamp and the broker's timestamp. The message timestamp can be later than or equal "
        "to the broker's timestamp, with the maximum allowable difference determined by the "
        "value set in this configuration. If log.message.timestamp.type=CreateTime, the message "
        "will be rejected if the difference in timestamps exceeds this specified threshold. "
        "This configuration is ignored if log.message.timestamp.type=LogAppendTime."),
    "log.message.timestamp.before.max.ms": (
        "This configuration sets the allowable timestamp difference between the broker's "
        "timestamp and the message timestamp. The message timestamp can be earlier than or "
        "equal to the broker's timestamp, with the maximum allowable difference determined by "
        "the value set in this configuration. If log.message.timestamp.type=CreateTime, the "
        "message will be rejected if the difference in timestamps exceeds this specified "
        "threshold. This configuration is ignored if log.message.timestamp.type=LogAppendTime."),
    "log.message.timestamp.type": (
        "Define whether the timestamp in the message is message create time or log append time. "
        "The value should be either <code>CreateTime</code> or <code>LogAppendTime</code>."),
    "log.preallocate": (
        "Should pre allocate file when create new segment? If you are using Kafka on Windows, "
        "you probably need to set it to true."),
    "log.retention.bytes": "The maximum size of the log before deleting it",
    "log.retention.check.interval.ms": (
        "The frequency in milliseconds that the log cleaner checks whether any log is eligible "
        "for deletion"),
    "log.retention.hours": (
        "The number of hours to keep a log file before deleting it (in hours), tertiary to "
        "log.retention.ms property"),
    "log.retention.minutes": (
        "The number of minutes to keep a log file before deleting it (in minutes), secondary to "
        "log.retention.ms property. If not set, the value in log.retention.hours is used"),
    "log.retention.ms": (
        "The number of milliseconds to keep a log file before deleting it (in milliseconds), If "
        "not set, the value in log.retention.minutes is used. If set to -1, no time limit is "
        "applied."),
    "log.roll.hours": (
        "The maximum time before a new log segment is rolled out (in hours), secondary to "
        "log.roll.ms property"),
    "log.roll.ms": (
        "The maximum time before a new log segment is rolled out (in milliseconds). If not set, "
        "the value in log.roll.hours is used"),
    "log.segment.bytes": "The maximum size of a single log file",
    "log.segment.delete.delay.ms": (
        "The amount of time to wait before deleting a file from the filesystem. If the value is "
        "0 and there is no file to delete, the system will wait 1 millisecond. Low value will "
        "cause busy waiting"),
    "max.connection.creation.rate": (
        "The maximum connection creation rate we allow in the broker at any time. "
        "Listener-level limits may also be configured by prefixing the config name with the "
        "listener prefix, for example, "
        "<code>listener.name.internal.max.connection.creation.rate</code>.Broker-wide "
        "connection rate limit should be configured based on broker capacity while listener "
        "limits should be configured based on application requirements. New connections will be "
        "throttled if either the listener or the broker limit is reached, with the exception of "
        "inter-broker listener. Connections on the inter-broker listener will be throttled only "
        "when the listener-level rate limit is reached."),
    "max.connections": (
        "The maximum number of connections we allow in the broker at any time. This limit is "
        "applied in addition to any per-ip limits configured using max.connections.per.ip. "
        "Listener-level limits may also be configured by prefixing the config name with the "
        "listener prefix, for example, "
        "<code>listener.name.internal.max.connections.per.ip</code>. Broker-wide limit should "
        "be configured based on broker capacity while listener limits should be configured "
        "based on application requirements. New connections are blocked if either the listener "
        "or broker limit is reached. Connections on the inter-broker listener are permitted "
        "even if broker-wide limit is reached. The least recently used connection on another "
        "listener will be closed in this case."),
    "max.connections.per.ip": (
        "The maximum number of connections we allow from each ip address. This can be set to 0 "
        "if there are overrides configured using max.connections.per.ip.overrides property. New "
        "connections from the ip address are dropped if the limit is reached."),
    "max.connections.per.ip.overrides": (
        "A comma-separated list of per-ip or hostname overrides to the default maximum number "
        "of connections. An example value is \"hostName:100,127.0.0.1:200\""),
    "message.max.bytes": (
        "The largest record batch size allowed by Kafka (after compression if compression is "
        "enabled). If this is increased and there are consumers older than 0.10.2, the "
        "consumers' fetch size must also be increased so that they can fetch record batches "
        "this large. In the latest message format version, records are always grouped into "
        "batches for efficiency. In previous message format versions, uncompressed records are "
        "not grouped into batches and this limit only applies to a single record in that "
        "case.This can be set per topic with the topic level <code>max.message.bytes</code> "
        "config."),
    "metadata.log.dir": (
        "This configuration determines where we put the metadata log for clusters in KRaft "
        "mode. If it is not set, the metadata log is placed in the first log directory from "
        "log.dirs."),
    "metric.reporters": (
        "A list of classes to use as metrics reporters. Implementing the "
        "<code>org.apache.kafka.common.metrics.MetricsReporter</code> interface allows plugging "
        "in classes that will be notified of new metric creation."),
    "min.insync.replicas": (
        "When a producer sets acks to \"all\" (or \"-1\"), <code>min.insync.replicas</code> "
        "specifies the minimum number of replicas that must acknowledge a write for the write "
        "to be considered successful. If this minimum cannot be met, then the producer will "
        "raise an exception (either <code>NotEnoughReplicas</code> or "
        "<code>NotEnoughReplicasAfterAppend</code>).<br>When used together, "
        "<code>min.insync.replicas</code> and acks allow you to enforce greater durability "
        "guarantees. A typical scenario would be to create a topic with a replication factor of "
        "3, set <code>min.insync.replicas</code> to 2, and produce with acks of \"all\". This "
        "will ensure that the producer raises an exception if a majority of replicas do not "
        "receive a write."),
    "node.id": (
        "The node ID associated with the roles this process is playing when "
        "<code>process.roles</code> is non-empty. This is required configuration when running "
        "in KRaft mode."),
    "num.io.threads": (
        "The number of threads that the server uses for processing requests, which may include "
        "disk I/O"),
    "num.network.threads": (
        "The number of threads that the server uses for receiving requests from the network and "
        "sending responses to the network. Noted: each listener (except for controller "
        "listener) creates its own thread pool."),
    "num.partitions": "The default number of log partitions per topic",
    "num.recovery.threads.per.data.dir": (
        "The number of threads per data directory to be used for log recovery at startup and "
        "flushing at shutdown"),
    "num.replica.fetchers": (
        "Number of fetcher threads used to replicate records from each source broker. The total "
        "number of fetchers on each broker is bound by <code>num.replica.fetchers</code> "
        "multiplied by the number of brokers in the cluster.Increasing this value can increase "
        "the degree of I/O parallelism in the follower and leader broker at the cost of higher "
        "CPU and memory utilization."),
    "offsets.topic.num.partitions": (
        "The number of partitions for the offset commit topic (should not change after "
        "deployment)."),
    "offsets.topic.replication.factor": (
        "The replication factor for the offsets topic (set higher to ensure availability). "
        "Internal topic creation will fail until the cluster size meets this replication factor "
        "requirement."),
    "process.roles": (
        "The roles that this process plays: 'broker', 'controller', or 'broker,controller' if "
        "it is both. This configuration is only applicable for clusters in KRaft (Kafka Raft) "
        "mode (instead of ZooKeeper). Leave this config undefined or empty for ZooKeeper "
        "clusters."),
    "producer.id.expiration.ms": (
        "The time in ms that a topic partition leader will wait before expiring producer IDs. "
        "Producer IDs will not expire while a transaction associated to them is still ongoing. "
        "Note that producer IDs may expire sooner if the last write from the producer ID is "
        "deleted due to the topic's retention settings. Setting this value the same or higher "
        "than <code>delivery.timeout.ms</code> can help prevent expiration during retries and "
        "protect against message duplication, but the default should be reasonable for most use "
        "cases."),
    "queued.max.request.bytes": (
        "The number of queued bytes allowed before no more requests are read"),
    "replica.lag.time.max.ms": (
        "If a follower hasn't sent any fetch requests or hasn't consumed up to the leaders log "
        "end offset for at least this time, the leader will remove the follower from isr"),
    "sasl.enabled.mechanisms": (
        "The list of SASL mechanisms enabled in the Kafka server. The list may contain any "
        "mechanism for which a security provider is available. Only GSSAPI is enabled by "
        "default."),
    "sasl.jaas.config": (
        "JAAS login context parameters for SASL connections in the format used by JAAS "
        "configuration files. JAAS configuration file format is described <a "
        "href=\"https://docs.oracle.com/javase/8/docs/technotes/guides/security/jgss/"
        "tutorials/LoginConfigFile.html\">here</a>. "
        "The format for the value is: <code>loginModuleClass controlFlag "
        "(optionName=optionValue)*;</code>. For brokers, the config must be prefixed with "
        "listener prefix and SASL mechanism name in lower-case. For example, "
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=com.example.ScramLoginModule "
        "required;"),
    "share.coordinator.state.topic.min.isr": (
        "Overridden min.insync.replicas for the share-group state topic."),
    "share.coordinator.state.topic.replication.factor": (
        "Replication factor for the share-group state topic. Topic creation will fail until the "
        "cluster size meets this replication factor requirement."),
    "socket.receive.buffer.bytes": (
        "The SO_RCVBUF buffer of the socket server sockets. If the value is -1, the OS default "
        "will be used."),
    "socket.request.max.bytes": "The maximum number of bytes in a socket request",
    "socket.send.buffer.bytes": (
        "The SO_SNDBUF buffer of the socket server sockets. If the value is -1, the OS default "
        "will be used."),
    "ssl.client.auth": (
        "Configures kafka broker to request client authentication. The following settings are "
        "common:  <ul> <li><code>ssl.client.auth=required</code> If set to required client "
        "authentication is required. <li><code>ssl.client.auth=requested</code> This means "
        "client authentication is optional. unlike required, if this option is set client can "
        "choose not to provide authentication information about itself "
        "<li><code>ssl.client.auth=none</code> This means client authentication is not "
        "needed.</ul>"),
    "ssl.enabled.protocols": (
        "The list of protocols enabled for SSL connections. The default is 'TLSv1.2,TLSv1.3' "
        "when running with Java 11 or newer, 'TLSv1.2' otherwise. With the default value for "
        "Java 11, clients and servers will prefer TLSv1.3 if both support it and fallback to "
        "TLSv1.2 otherwise (assuming both support at least TLSv1.2). This default should be "
        "fine for most cases. Also see the config documentation for `ssl.protocol`."),
    "ssl.endpoint.identification.algorithm": (
        "The endpoint identification algorithm to validate server hostname using server "
        "certificate. "),
    "ssl.key.password": (
        "The password of the private key in the key store file or the PEM key specified in "
        "'ssl.keystore.key'."),
    "ssl.keystore.certificate.chain": (
        "Certificate chain in the format specified by 'ssl.keystore.type'. Default SSL engine "
        "factory supports only PEM format with a list of X.509 certificates"),
    "ssl.keystore.key": (
        "Private key in the format specified by 'ssl.keystore.type'. Default SSL engine factory "
        "supports only PEM format with PKCS#8 keys. If the key is encrypted, key password must "
        "be specified using 'ssl.key.password'"),
    "ssl.keystore.location": (
        "The location of the key store file. This is optional for client and can be used for "
        "two-way authentication for client."),
    "ssl.keystore.password": (
        "The store password for the key store file. This is optional for client and only needed "
        "if 'ssl.keystore.location' is configured. Key store password is not supported for PEM "
        "format."),
    "ssl.keystore.type": (
        "The file format of the key store file. This is optional for client. The values "
        "currently supported by the default `ssl.engine.factory.class` are [JKS, PKCS12, PEM]."),
    "ssl.truststore.certificates": (
        "Trusted certificates in the format specified by 'ssl.truststore.type'. Default SSL "
        "engine factory supports only PEM format with X.509 certificates."),
    "ssl.truststore.location": "The location of the trust store file.",
    "ssl.truststore.password": (
        "The password for the trust store file. If a password is not set, trust store file "
        "configured will still be used, but integrity checking is disabled. Trust store "
        "password is not supported for PEM format."),
    "ssl.truststore.type": (
        "The file format of the trust store file. The values currently supported by the default "
        "`ssl.engine.factory.class` are [JKS, PKCS12, PEM]."),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
        "The interval at which to rollback transactions that have timed out"),
    "transaction.max.timeout.ms": (
        "The maximum allowed timeout for transactions. If a client\u2019s requested transaction "
        "time "
        "exceed this, then the broker will return an error in InitProducerIdRequest. This "
        "prevents a client from too large of a timeout, which can stall consumers reading from "
        "topics included in the transaction."),
    "transaction.partition.verification.enable": (
        "Enable verification that checks that the partition has been added to the transaction "
        "before writing transactional records to the partition"),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "The interval at which to remove transactions that have expired due to "
        "<code>transactional.id.expiration.ms</code> passing"),
    "transaction.state.log.min.isr": (
        "The minimum number of replicas that must acknowledge a write to transaction topic in "
        "order to be considered successful."),
    "transaction.state.log.num.partitions": (
        "The number of partitions for the transaction topic (should not change after "
        "deployment)."),
    "transaction.state.log.replication.factor": (
        "The replication factor for the transaction topic (set higher to ensure availability). "
        "Internal topic creation will fail until the cluster size meets this replication factor "
        "requirement."),
    "transactional.id.expiration.ms": (
        "The time in ms that the transaction coordinator will wait without receiving any "
        "transaction status updates for the current transaction before expiring its "
        "transactional id. Transactional IDs will not expire while a the transaction is still "
        "ongoing."),
    "unclean.leader.election.enable": (
        "Indicates whether to enable replicas not in the ISR set to be elected as leader as a "
        "last resort, even though doing so may result in data loss<p>Note: In KRaft mode, when "
        "enabling this config dynamically, it needs to wait for the unclean leader election "
        "thread to trigger election periodically (default is 5 minutes). Please run "
        "`kafka-leader-election.sh` with `unclean` option to trigger the unclean leader "
        "election immediately if needed.</p>"),
}
