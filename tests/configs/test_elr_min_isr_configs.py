"""ELR's config rules (KIP-966; Kafka 4.1+ finalizes ``eligible.leader.replicas.version`` 1
on a new cluster, and kcoord has ELR always on): the cluster-level ``min.insync.replicas``
the controller writes on activation, and the alters it refuses. Mirrors
``ConfigurationControlManagerTest.testMaybeGenerateElrSafetyRecords`` and
``testRejectMinIsrChangeWhenElrEnabled`` (INVALID_CONFIG with Kafka's messages)."""

from __future__ import annotations

import pytest
from configs_support import apply_all, error_of, store

from coordinator.configs.store import BROKER, AlterOp
from storage.config_records import ConfigRecordKey
from wire import ErrorCode

SET, DELETE = 0, 1
MIN_ISR = "min.insync.replicas"
BROKER_LEVEL = "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
CLUSTER_REMOVAL = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."


def _written(records: list[object]) -> list[tuple[str, str | None]]:
    out = []
    for record in records:
        key, value = record.key, record.value  # type: ignore[attr-defined]
        assert isinstance(key, ConfigRecordKey) and key.resource_type == BROKER
        assert key.name == MIN_ISR
        out.append((key.resource_name, value.value))
    return out


@pytest.mark.parametrize("set_static_config", [False, True])
def test_maybe_generate_elr_safety_records(set_static_config: bool) -> None:
    static = {MIN_ISR: "2"} if set_static_config else {}
    configs = store(static=static)
    configs.brokers["1"] = {MIN_ISR: "3"}  # (written before ELR was on)
    effective = "2" if set_static_config else "1"
    records = configs.elr_safety_records()
    assert _written(records) == [("", effective), ("1", None)]
    apply_all(configs, records)
    assert configs.brokers == {"": {MIN_ISR: effective}}
    assert configs.elr_safety_records() == []  # nothing once they hold


@pytest.mark.parametrize("removal", [False, True])
def test_reject_min_isr_change_when_elr_enabled(removal: bool) -> None:
    configs = store(node_id=1, static={MIN_ISR: "2"})
    apply_all(configs, configs.elr_safety_records())
    op = AlterOp(MIN_ISR, DELETE, None) if removal else AlterOp(MIN_ISR, SET, "3")
    assert error_of(lambda: configs.incremental(BROKER, "1", [op])) == (
        ErrorCode.INVALID_CONFIG, BROKER_LEVEL)
    cluster = lambda: configs.incremental(BROKER, "", [op])  # noqa: E731
    if removal:
        assert error_of(cluster) == (ErrorCode.INVALID_CONFIG, CLUSTER_REMOVAL)
    else:
        assert _written(cluster()) == [("", "3")]


def test_a_legacy_alter_cannot_drop_the_cluster_level_value() -> None:
    """A legacy AlterConfigs replaces every key: leaving min.insync.replicas out removes it,
    which ELR forbids; naming it keeps it."""
    configs = store()
    apply_all(configs, configs.elr_safety_records())
    assert error_of(lambda: configs.legacy(BROKER, "", {"log.cleaner.threads": "2"},
                                           ["log.cleaner.threads"])) == (
        ErrorCode.INVALID_CONFIG, CLUSTER_REMOVAL)
    kept = configs.legacy(BROKER, "", {"log.cleaner.threads": "2", MIN_ISR: "1"},
                          ["log.cleaner.threads", MIN_ISR])
    assert len(kept) == 2
    assert error_of(lambda: configs.legacy(BROKER, "0", {MIN_ISR: "1"}, [MIN_ISR])) == (
        ErrorCode.INVALID_CONFIG, BROKER_LEVEL)
