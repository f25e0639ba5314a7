"""Group coordinator configuration: the typed frozen view of its keys.

``GroupCoordinatorConfig.java``: the classic-group, consumer-group, share-group and
offset-management settings that the coordinator core honours. Names, types, defaults and
bounds are the keys' (``coordinator.configs.broker_keys.GROUP_COORDINATOR_KEYS``; a field is
its key with underscores for dots). ``CoordinatorConfig.from_properties`` parses a
``server.properties`` style mapping and rejects unknown keys and bad values with a one-line
``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache

from coordinator.configs.broker_keys import GROUP_COORDINATOR_KEYS
from coordinator.configs.config_key import KAFKA_DEFAULT, ListOf, OneOf, field_key, kafka_defaults

__all__ = ["KNOWN_KEYS", "ConfigError", "CoordinatorConfig"]


class ConfigError(ValueError):
    """An unknown configuration key or an invalid value."""


@dataclass(frozen=True, slots=True)
@kafka_defaults(GROUP_COORDINATOR_KEYS)
class CoordinatorConfig:
    """Coordinator settings; field names are Kafka's property names with dots as underscores."""

    group_min_session_timeout_ms: int = KAFKA_DEFAULT
    group_max_session_timeout_ms: int = KAFKA_DEFAULT
    group_initial_rebalance_delay_ms: int = KAFKA_DEFAULT
    group_max_size: int = KAFKA_DEFAULT
    offsets_retention_minutes: int = KAFKA_DEFAULT
    offsets_retention_check_interval_ms: int = KAFKA_DEFAULT
    offset_metadata_max_bytes: int = KAFKA_DEFAULT
    # Share partitions and sessions (KIP-932).
    group_share_delivery_count_limit: int = KAFKA_DEFAULT
    group_share_record_lock_duration_ms: int = KAFKA_DEFAULT
    group_share_partition_max_record_locks: int = KAFKA_DEFAULT
    group_share_max_share_sessions: int = KAFKA_DEFAULT
    # The consumer group protocol (KIP-848).
    group_consumer_session_timeout_ms: int = KAFKA_DEFAULT
    group_consumer_min_session_timeout_ms: int = KAFKA_DEFAULT
    group_consumer_max_session_timeout_ms: int = KAFKA_DEFAULT
    group_consumer_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_consumer_min_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_consumer_max_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_consumer_max_size: int = KAFKA_DEFAULT
    group_consumer_assignors: str = KAFKA_DEFAULT
    group_consumer_migration_policy: str = KAFKA_DEFAULT
    group_consumer_regex_refresh_interval_ms: int = KAFKA_DEFAULT
    group_coordinator_rebalance_protocols: str = KAFKA_DEFAULT
    # Share groups (KIP-932).
    group_share_session_timeout_ms: int = KAFKA_DEFAULT
    group_share_min_session_timeout_ms: int = KAFKA_DEFAULT
    group_share_max_session_timeout_ms: int = KAFKA_DEFAULT
    group_share_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_share_min_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_share_max_heartbeat_interval_ms: int = KAFKA_DEFAULT
    group_share_max_size: int = KAFKA_DEFAULT

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _CHOICES:
                _check_choices(f.name, value)
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{_key(f.name)} must be an integer, got {value!r}")
            low, high = GROUP_COORDINATOR_KEYS[_key(f.name)].bounds
            if not low <= value <= high:
                raise ConfigError(f"{_key(f.name)}={value} is out of range [{low}, {high}]")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ConfigError(
                "group.min.session.timeout.ms must not exceed group.max.session.timeout.ms"
            )
        _check_bounded("group.consumer.session.timeout.ms", self.group_consumer_session_timeout_ms,
                       self.group_consumer_min_session_timeout_ms,
                       self.group_consumer_max_session_timeout_ms)
        _check_bounded("group.consumer.heartbeat.interval.ms",
                       self.group_consumer_heartbeat_interval_ms,
                       self.group_consumer_min_heartbeat_interval_ms,
                       self.group_consumer_max_heartbeat_interval_ms)
        if self.group_consumer_heartbeat_interval_ms >= self.group_consumer_session_timeout_ms:
            raise ConfigError(
                "group.consumer.heartbeat.interval.ms must be less than "
                "group.consumer.session.timeout.ms"
            )
        _check_bounded("group.share.session.timeout.ms", self.group_share_session_timeout_ms,
                       self.group_share_min_session_timeout_ms,
                       self.group_share_max_session_timeout_ms)
        _check_bounded("group.share.heartbeat.interval.ms",
                       self.group_share_heartbeat_interval_ms,
                       self.group_share_min_heartbeat_interval_ms,
                       self.group_share_max_heartbeat_interval_ms)
        if self.group_share_heartbeat_interval_ms >= self.group_share_session_timeout_ms:
            raise ConfigError(
                "group.share.heartbeat.interval.ms must be less than "
                "group.share.session.timeout.ms"
            )
        if "classic" not in self.rebalance_protocols:
            raise ConfigError("group.coordinator.rebalance.protocols must contain classic")

    @property
    def consumer_assignors(self) -> tuple[str, ...]:
        """The server-side assignors' names; the first is the default."""
        return _names(self.group_consumer_assignors)

    @property
    def rebalance_protocols(self) -> tuple[str, ...]:
        """group.coordinator.rebalance.protocols as names."""
        return _names(self.group_coordinator_rebalance_protocols)

    @property
    def consumer_protocol_enabled(self) -> bool:
        """Whether ConsumerGroupHeartbeat is served (``consumer`` is a rebalance protocol)."""
        return "consumer" in self.rebalance_protocols

    @property
    def offsets_retention_ms(self) -> int:
        """Retention in ms, computed with Python ints (no 32-bit overflow, Kafka's KAFKA-6482)."""
        return self.offsets_retention_minutes * 60 * 1000

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> CoordinatorConfig:
        """Build a config from Kafka property names; raise ConfigError on unknown keys/values."""
        kwargs: dict[str, int | str] = {}
        for key, raw in props.items():
            name = _FIELD_BY_KEY.get(key)
            if name is None:
                raise ConfigError(f"unknown configuration key {key!r}")
            text = str(raw).strip()
            if name in _CHOICES:
                kwargs[name] = text
                continue
            try:
                value = int(text, 10)
            except ValueError:
                raise ConfigError(f"{key} must be an integer, got {raw!r}") from None
            kwargs[name] = value
        return cls(**kwargs)  # type: ignore[arg-type]

    def to_properties(self) -> dict[str, str]:
        """The config as Kafka property names and string values."""
        return {_key(f.name): str(getattr(self, f.name)) for f in fields(self)}


_key = field_key


@lru_cache(maxsize=64)
def _names(value: str) -> tuple[str, ...]:
    """A comma-separated list's names, cached: the consumer protocol's checks read them on
    every ConsumerGroupHeartbeat (``consumer_protocol_enabled``)."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _check_choices(name: str, value: object) -> None:
    allowed, many = _CHOICES[name]
    if not isinstance(value, str):
        raise ConfigError(f"{_key(name)} must be a string, got {value!r}")
    picked = _names(value) if many else (value.strip(),)
    if not picked or any(p not in allowed for p in picked):
        raise ConfigError(f"{_key(name)}={value!r}: expected {'a list of ' if many else ''}"
                          f"{', '.join(allowed)}")


def _check_bounded(key: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        prefix = key.removesuffix(".session.timeout.ms").removesuffix(".heartbeat.interval.ms")
        what = key[len(prefix) + 1 :]
        raise ConfigError(f"{key}={value} must be within {prefix}.min.{what} ({low}) and "
                          f"{prefix}.max.{what} ({high})")


# String settings: (allowed values, whether a comma-separated list).
_CHOICES: dict[str, tuple[tuple[str, ...], bool]] = {
    name.replace(".", "_"): (v.options, isinstance(v, ListOf))
    for name, key in GROUP_COORDINATOR_KEYS.items()
    if isinstance(v := key.validator, OneOf | ListOf)
}

_FIELD_BY_KEY: dict[str, str] = {_key(f.name): f.name for f in fields(CoordinatorConfig)}

assert set(_FIELD_BY_KEY) == set(GROUP_COORDINATOR_KEYS), "a key without its field"
KNOWN_KEYS: frozenset[str] = frozenset(_FIELD_BY_KEY)
"""The Kafka property names CoordinatorConfig.from_properties accepts."""
