"""CoordinatorConfig: Kafka's names and defaults, validation, retention arithmetic."""

from __future__ import annotations

import pytest

from coordinator.config import KNOWN_KEYS, ConfigError, CoordinatorConfig


def test_defaults_are_kafkas() -> None:
    config = CoordinatorConfig()
    assert config.to_properties() == {
        "group.min.session.timeout.ms": "6000",
        "group.max.session.timeout.ms": "1800000",
        "group.initial.rebalance.delay.ms": "3000",
        "group.max.size": "2147483647",
        "offsets.retention.minutes": "10080",
        "offsets.retention.check.interval.ms": "600000",
        "offset.metadata.max.bytes": "4096",
        "group.share.delivery.count.limit": "5",
        "group.share.record.lock.duration.ms": "30000",
        "group.share.partition.max.record.locks": "2000",
        "group.share.max.share.sessions": "2000",
        "group.consumer.session.timeout.ms": "45000",
        "group.consumer.min.session.timeout.ms": "45000",
        "group.consumer.max.session.timeout.ms": "60000",
        "group.consumer.heartbeat.interval.ms": "5000",
        "group.consumer.min.heartbeat.interval.ms": "5000",
        "group.consumer.max.heartbeat.interval.ms": "15000",
        "group.consumer.max.size": "2147483647",
        "group.consumer.assignors": "uniform,range",
        "group.consumer.migration.policy": "bidirectional",
        "group.consumer.regex.refresh.interval.ms": "600000",
        "group.coordinator.rebalance.protocols": "classic,consumer",
        "group.share.session.timeout.ms": "45000",
        "group.share.min.session.timeout.ms": "45000",
        "group.share.max.session.timeout.ms": "60000",
        "group.share.heartbeat.interval.ms": "5000",
        "group.share.min.heartbeat.interval.ms": "5000",
        "group.share.max.heartbeat.interval.ms": "15000",
        "group.share.max.size": "200",
    }
    assert config.offsets_retention_ms == 7 * 24 * 3600 * 1000


def test_known_keys() -> None:
    assert set(CoordinatorConfig().to_properties()) == KNOWN_KEYS


def test_offsets_retention_ms_integer_overflow() -> None:
    config = CoordinatorConfig.from_properties({"offsets.retention.minutes": str(2**31 - 1)})
    assert config.offsets_retention_ms == (2**31 - 1) * 60 * 1000


_STRING_VALUES = {
    "group.consumer.assignors": "range",
    "group.consumer.migration.policy": "upgrade",
    "group.coordinator.rebalance.protocols": "classic",
}


def test_from_properties_parses_every_key() -> None:
    props = {key: _STRING_VALUES.get(key, "7") for key in KNOWN_KEYS}
    # The session timeout must stay above the heartbeat interval.
    props["group.consumer.session.timeout.ms"] = "8"
    props["group.consumer.max.session.timeout.ms"] = "8"
    props["group.share.session.timeout.ms"] = "8"
    props["group.share.max.session.timeout.ms"] = "8"
    config = CoordinatorConfig.from_properties(props)
    assert config.to_properties() == props


def test_consumer_minimums_can_be_lowered_for_tests() -> None:
    config = CoordinatorConfig.from_properties({
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.min.heartbeat.interval.ms": "500",
        "group.consumer.session.timeout.ms": "3000",
        "group.consumer.min.session.timeout.ms": "3000",
    })
    assert (config.group_consumer_heartbeat_interval_ms,
            config.group_consumer_session_timeout_ms) == (500, 3000)
    assert config.consumer_assignors == ("uniform", "range")
    assert config.consumer_protocol_enabled


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"group.max.sizes": "3"}, "unknown configuration key"),
        ({"group.max.size": "0"}, "out of range"),
        ({"group.max.size": "many"}, "must be an integer"),
        ({"group.max.size": "1.5"}, "must be an integer"),
        ({"group.max.size": str(2**31)}, "out of range"),
        ({"offsets.retention.minutes": "0"}, "out of range"),
        ({"offsets.retention.check.interval.ms": "0"}, "out of range"),
        ({"group.initial.rebalance.delay.ms": "-1"}, "out of range"),
        ({"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"},
         "must not exceed"),
        ({"group.consumer.heartbeat.interval.ms": "500"}, "must be within"),
        ({"group.consumer.session.timeout.ms": "90000"}, "must be within"),
        ({"group.consumer.assignors": "sticky"}, "expected a list of uniform, range"),
        ({"group.consumer.migration.policy": "sideways"}, "expected disabled"),
        ({"group.coordinator.rebalance.protocols": "consumer"}, "must contain classic"),
    ],
)
def test_from_properties_rejects_bad_input(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        CoordinatorConfig.from_properties(props)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_long_check_interval_is_accepted() -> None:
    config = CoordinatorConfig.from_properties(
        {"offsets.retention.check.interval.ms": str(2**40)})
    assert config.offsets_retention_check_interval_ms == 2**40


def test_direct_construction_is_validated() -> None:
    with pytest.raises(ConfigError):
        CoordinatorConfig(group_max_size=0)
    with pytest.raises(ConfigError):
        CoordinatorConfig(group_max_size=True)


def test_share_group_settings_are_bounded_as_kafka() -> None:
    with pytest.raises(ConfigError, match=r"group\.share\.max\.size=1001 is out of range"):
        CoordinatorConfig.from_properties({"group.share.max.size": "1001"})
    with pytest.raises(ConfigError, match=r"group\.share\.session\.timeout\.ms=1000 must be "
                       r"within group\.share\.min\.session\.timeout\.ms"):
        CoordinatorConfig.from_properties({"group.share.session.timeout.ms": "1000"})
    with pytest.raises(ConfigError, match=r"must be less than group\.share\.session\.timeout\.ms"):
        CoordinatorConfig.from_properties({
            "group.share.min.heartbeat.interval.ms": "1000",
            "group.share.heartbeat.interval.ms": "1000",
            "group.share.min.session.timeout.ms": "1000",
            "group.share.session.timeout.ms": "1000"})
    lowered = CoordinatorConfig.from_properties({
        "group.share.min.session.timeout.ms": "1000", "group.share.session.timeout.ms": "1000",
        "group.share.min.heartbeat.interval.ms": "100",
        "group.share.heartbeat.interval.ms": "100"})
    assert (lowered.group_share_session_timeout_ms, lowered.group_share_heartbeat_interval_ms) == (
        1000, 100)
