"""Group coordinator configuration with Kafka's property names and defaults.

``GroupCoordinatorConfig.java``: the classic-group and offset-management settings that the
coordinator core honours. ``CoordinatorConfig.from_properties`` parses a ``server.properties``
style mapping and rejects unknown keys and bad values with a one-line ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache

__all__ = ["KNOWN_KEYS", "ConfigError", "CoordinatorConfig"]

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1


class ConfigError(ValueError):
    """An unknown configuration key or an invalid value."""


@dataclass(frozen=True, slots=True)
class CoordinatorConfig:
    """Coordinator settings; field names are Kafka's property names with dots as underscores."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = _INT_MAX
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    # Share partitions and sessions (KIP-932), ShareGroupConfig's names and defaults.
    group_share_delivery_count_limit: int = 5
    group_share_record_lock_duration_ms: int = 30_000
    group_share_partition_max_record_locks: int = 2000
    group_share_max_share_sessions: int = 2000
    # The consumer group protocol (KIP-848), GroupCoordinatorConfig's names and defaults.
    group_consumer_session_timeout_ms: int = 45_000
    group_consumer_min_session_timeout_ms: int = 45_000
    group_consumer_max_session_timeout_ms: int = 60_000
    group_consumer_heartbeat_interval_ms: int = 5_000
    group_consumer_min_heartbeat_interval_ms: int = 5_000
    group_consumer_max_heartbeat_interval_ms: int = 15_000
    group_consumer_max_size: int = _INT_MAX
    group_consumer_assignors: str = "uniform,range"
    group_consumer_migration_policy: str = "bidirectional"
    group_consumer_regex_refresh_interval_ms: int = 600_000
    group_coordinator_rebalance_protocols: str = "classic,consumer"
    # Share groups (KIP-932), GroupCoordinatorConfig's / ShareGroupConfig's names, Kafka 4.2.
    group_share_session_timeout_ms: int = 45_000
    group_share_min_session_timeout_ms: int = 45_000
    group_share_max_session_timeout_ms: int = 60_000
    group_share_heartbeat_interval_ms: int = 5_000
    group_share_min_heartbeat_interval_ms: int = 5_000
    group_share_max_heartbeat_interval_ms: int = 15_000
    group_share_max_size: int = 200

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _CHOICES:
                _check_choices(f.name, value)
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{_key(f.name)} must be an integer, got {value!r}")
            low, high = _RANGES[f.name]
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


def _key(field_name: str) -> str:
    return field_name.replace("_", ".")


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
    "group_consumer_assignors": (("uniform", "range"), True),
    "group_consumer_migration_policy": (("disabled", "upgrade", "downgrade", "bidirectional"),
                                        False),
    "group_coordinator_rebalance_protocols": (("classic", "consumer"), True),
}

_RANGES: dict[str, tuple[int, int]] = {
    "group_consumer_session_timeout_ms": (1, _INT_MAX),
    "group_consumer_min_session_timeout_ms": (1, _INT_MAX),
    "group_consumer_max_session_timeout_ms": (1, _INT_MAX),
    "group_consumer_heartbeat_interval_ms": (1, _INT_MAX),
    "group_consumer_min_heartbeat_interval_ms": (1, _INT_MAX),
    "group_consumer_max_heartbeat_interval_ms": (1, _INT_MAX),
    "group_consumer_max_size": (1, _INT_MAX),
    "group_consumer_regex_refresh_interval_ms": (1, _INT_MAX),
    "group_share_session_timeout_ms": (1, _INT_MAX),
    "group_share_min_session_timeout_ms": (1, _INT_MAX),
    "group_share_max_session_timeout_ms": (1, _INT_MAX),
    "group_share_heartbeat_interval_ms": (1, _INT_MAX),
    "group_share_min_heartbeat_interval_ms": (1, _INT_MAX),
    "group_share_max_heartbeat_interval_ms": (1, _INT_MAX),
    "group_share_max_size": (1, 1000),
    "group_min_session_timeout_ms": (0, _INT_MAX),
    "group_max_session_timeout_ms": (0, _INT_MAX),
    "group_initial_rebalance_delay_ms": (0, _INT_MAX),
    "group_max_size": (1, _INT_MAX),
    "offsets_retention_minutes": (1, _INT_MAX),
    "offsets_retention_check_interval_ms": (1, _LONG_MAX),
    "offset_metadata_max_bytes": (0, _INT_MAX),
    "group_share_delivery_count_limit": (2, 10),
    "group_share_record_lock_duration_ms": (1, _INT_MAX),
    "group_share_partition_max_record_locks": (1, _INT_MAX),
    "group_share_max_share_sessions": (1, _INT_MAX),
}

_FIELD_BY_KEY: dict[str, str] = {_key(f.name): f.name for f in fields(CoordinatorConfig)}

KNOWN_KEYS: frozenset[str] = frozenset(_FIELD_BY_KEY)
"""The Kafka property names CoordinatorConfig.from_properties accepts."""
