"""A group's configs with their broker synonyms through real admin clients over real TCP,
on the ``kcoord`` test double: confluent-kafka's AdminClient and kafka-python's
KafkaAdminClient ``describe_configs`` with ``include_synonyms`` on a GROUP resource report
``consumer.session.timeout.ms`` as the broker's static ``group.consumer.session.timeout.ms``
(STATIC_BROKER_CONFIG, then Kafka's default), and GROUP_CONFIG once set on the group, as
Kafka's ``ConfigHelper.createGroupConfigEntry`` does."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from coordinator.testing import KcoordServer

confluent_admin = pytest.importorskip("confluent_kafka.admin")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    kafka_admin = pytest.importorskip("kafka.admin")

TIMEOUT = 20
SESSION, BROKER_SESSION = "consumer.session.timeout.ms", "group.consumer.session.timeout.ms"
STATIC, DEFAULT, GROUP_CONFIG = 4, 5, 8  # (confluent-kafka: the ids)


def _confluent_describe(admin: Any, group: str) -> dict[str, Any]:
    resource = confluent_admin.ConfigResource(confluent_admin.ResourceType.GROUP, group)
    (future,) = admin.describe_configs([resource]).values()
    return dict(future.result(TIMEOUT))


def _kafka_python_describe(bootstrap: str, group: str) -> dict[str, Any]:
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.GROUP, group)
        described: dict[str, Any] = admin.describe_configs([resource], include_synonyms=True,
                                                           config_filter="all")
    finally:
        admin.close()
    return described


@pytest.mark.kcoord_config({BROKER_SESSION: "50000"})
def test_confluent_reports_the_broker_synonym_and_the_groups_value(
        kcoord: KcoordServer) -> None:
    admin = confluent_admin.AdminClient({"bootstrap.servers": kcoord.bootstrap})
    session = _confluent_describe(admin, "g")[SESSION]
    assert (session.value, session.source) == ("50000", STATIC)
    # librdkafka keys the synonyms by name: the last of a name's layers (Kafka's default).
    assert {name: (s.value, s.source) for name, s in session.synonyms.items()} == {
        BROKER_SESSION: ("45000", DEFAULT)}
    entry = confluent_admin.ConfigEntry(
        SESSION, "55000", incremental_operation=confluent_admin.AlterConfigOpType.SET)
    resource = confluent_admin.ConfigResource(
        confluent_admin.ResourceType.GROUP, "g", incremental_configs=[entry])
    (altered,) = admin.incremental_alter_configs([resource]).values()
    altered.result(TIMEOUT)
    session = _confluent_describe(admin, "g")[SESSION]
    assert (session.value, session.source) == ("55000", GROUP_CONFIG)
    assert {name: (s.value, s.source) for name, s in session.synonyms.items()} == {
        SESSION: ("55000", GROUP_CONFIG), BROKER_SESSION: ("45000", DEFAULT)}
    reset = _confluent_describe(admin, "g")["share.auto.offset.reset"]
    assert (reset.value, reset.source) == ("latest", DEFAULT)


@pytest.mark.kcoord_config({BROKER_SESSION: "50000"})
def test_kafka_python_reports_every_synonym_with_its_source(kcoord: KcoordServer) -> None:
    described = _kafka_python_describe(kcoord.bootstrap, "g")
    session = described["group"]["g"][SESSION]
    assert (session["value"], session["config_source"]) == ("50000", "STATIC_BROKER_CONFIG")
    assert [(s["name"], s["value"], s["source"]) for s in session["synonyms"]] == [
        (BROKER_SESSION, "50000", "STATIC_BROKER_CONFIG"),
        (BROKER_SESSION, "45000", "DEFAULT_CONFIG")]
