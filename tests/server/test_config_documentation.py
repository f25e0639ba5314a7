"""DescribeConfigs v3+ with ``include_documentation`` returns Kafka's own documentation of
each key, verbatim (issue 30 item 1): a topic key ``TopicConfig``'s ``*_DOC``, a group key its
broker key's (``GroupConfig`` is defined with ``GroupCoordinatorConfig``'s docs), a broker key
``ServerLogConfigs``' / ``GroupCoordinatorConfig``'s / ``SocketServerConfigs``' ...; only the
keys Kafka does not define keep kcoord's own text."""

from __future__ import annotations

from typing import Any

import pytest

from coordinator.configs.broker_docs import BROKER_DOCS
from coordinator.configs.broker_keys import SERVER_PROPERTIES
from coordinator.configs.definitions import GROUP_BROKER_DEFAULTS, GROUP_KEYS, TOPIC_KEYS
from coordinator.configs.group_docs import GROUP_COORDINATOR_DOCS
from coordinator.configs.topic_docs import TOPIC_DOCS
from wire import ApiKey, ErrorCode

TOPIC, BROKER, GROUP = 2, 4, 32

#: Kafka's text for a few keys (TopicConfig.FILE_DELETE_DELAY_MS_DOC,
#: GroupCoordinatorConfig.CONSUMER_GROUP_SESSION_TIMEOUT_MS_DOC /
#: GROUP_INITIAL_REBALANCE_DELAY_MS_DOC, ServerLogConfigs.LOG_RETENTION_TIME_HOURS_DOC).
KAFKA_TEXT = {
    (TOPIC, "file.delete.delay.ms"): "The time to wait before deleting a file from the filesystem",
    (TOPIC, "compression.gzip.level"):
        "The compression level to use if compression.type is set to <code>gzip</code>.",
    (TOPIC, "segment.jitter.ms"): "The maximum random jitter subtracted from the scheduled "
        "segment roll time to avoid thundering herds of segment rolling",
    (GROUP, "consumer.session.timeout.ms"):
        "The timeout to detect client failures when using the consumer group protocol.",
    (GROUP, "share.auto.offset.reset"):
        "The strategy to initialize the share-partition start offset.",
    (BROKER, "group.initial.rebalance.delay.ms"):
        "The amount of time the group coordinator will wait for more consumers to join a new "
        "group before performing the first rebalance. A longer delay means potentially fewer "
        "rebalances, but increases the time until processing begins.",
    (BROKER, "log.retention.hours"): "The number of hours to keep a log file before deleting "
        "it (in hours), tertiary to log.retention.ms property",
}


@pytest.mark.trio
async def test_every_key_is_documented_as_kafka_documents_it(start_server: Any,
                                                             connect: Any) -> None:
    running = await start_server(topics=(("t", 1),))
    client = await connect(running.port)
    got = await client.request(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": kind, "resource_name": name, "configuration_keys": None}
        for kind, name in ((TOPIC, "t"), (BROKER, "0"), (GROUP, "g"))],
        "include_synonyms": False, "include_documentation": True})
    assert [r.error_code for r in got.results] == [ErrorCode.NONE] * 3
    topic, broker, group = ({c.name: c.documentation for c in r.configs} for r in got.results)
    for (kind, name), text in KAFKA_TEXT.items():
        assert {TOPIC: topic, BROKER: broker, GROUP: group}[kind][name] == text, name
    assert topic == TOPIC_DOCS
    assert group == {name: GROUP_COORDINATOR_DOCS[GROUP_BROKER_DEFAULTS[name]]
                     for name in GROUP_KEYS if name != "share.auto.offset.reset"} | {
        "share.auto.offset.reset": KAFKA_TEXT[(GROUP, "share.auto.offset.reset")]}
    kafkas = BROKER_DOCS | GROUP_COORDINATOR_DOCS
    documented = {name: doc for name, doc in broker.items() if name in kafkas}
    assert documented == {name: kafkas[name] for name in documented}
    assert len(documented) >= 60  # the static keys and the dynamic ones this broker reports


def test_the_definitions_carry_kafkas_text() -> None:
    assert {name: key.documentation for name, key in TOPIC_KEYS.items()} == TOPIC_DOCS
    for name, doc in (BROKER_DOCS | GROUP_COORDINATOR_DOCS).items():
        assert SERVER_PROPERTIES[name].documentation == doc, name
    # Every broker key has Kafka's text but those kcoord could not take from Kafka's source.
    own = sorted(set(SERVER_PROPERTIES) - set(BROKER_DOCS) - set(GROUP_COORDINATOR_DOCS))
    assert own == sorted(OWN_TEXT), own


#: Broker keys that keep kcoord's text: kcoord's own keys and Kafka's whose documentation is
#: built from an enum's values and changed with each release (group.coordinator.rebalance.protocols)
#: or not Kafka 4 configs (transaction.version is a feature, zookeeper.* are gone).
OWN_TEXT = (
    "coordinator.load.delay.ms", "group.coordinator.rebalance.protocols",
    "kcoord.max.open.segment.files", "kcoord.queued.max.response.bytes",
    "socket.send.timeout.ms", "transaction.version",
    "zookeeper.connect", "zookeeper.connection.timeout.ms",
)
