"""Group coordinator configuration with Kafka's property names and defaults.

``GroupCoordinatorConfig.java``: the classic-group and offset-management settings that the
coordinator core honours. ``CoordinatorConfig.from_properties`` parses a ``server.properties``
style mapping and rejects unknown keys and bad values with a one-line ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

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

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{_key(f.name)} must be an integer, got {value!r}")
            low, high = _RANGES[f.name]
            if not low <= value <= high:
                raise ConfigError(f"{_key(f.name)}={value} is out of range [{low}, {high}]")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ConfigError(
                "group.min.session.timeout.ms must not exceed group.max.session.timeout.ms"
            )

    @property
    def offsets_retention_ms(self) -> int:
        """Retention in ms, computed with Python ints (no 32-bit overflow, Kafka's KAFKA-6482)."""
        return self.offsets_retention_minutes * 60 * 1000

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> CoordinatorConfig:
        """Build a config from Kafka property names; raise ConfigError on unknown keys/values."""
        kwargs: dict[str, int] = {}
        for key, raw in props.items():
            name = _FIELD_BY_KEY.get(key)
            if name is None:
                raise ConfigError(f"unknown configuration key {key!r}")
            text = str(raw).strip()
            try:
                value = int(text, 10)
            except ValueError:
                raise ConfigError(f"{key} must be an integer, got {raw!r}") from None
            kwargs[name] = value
        return cls(**kwargs)

    def to_properties(self) -> dict[str, str]:
        """The config as Kafka property names and string values."""
        return {_key(f.name): str(getattr(self, f.name)) for f in fields(self)}


def _key(field_name: str) -> str:
    return field_name.replace("_", ".")


_RANGES: dict[str, tuple[int, int]] = {
    "group_min_session_timeout_ms": (0, _INT_MAX),
    "group_max_session_timeout_ms": (0, _INT_MAX),
    "group_initial_rebalance_delay_ms": (0, _INT_MAX),
    "group_max_size": (1, _INT_MAX),
    "offsets_retention_minutes": (1, _INT_MAX),
    "offsets_retention_check_interval_ms": (1, _LONG_MAX),
    "offset_metadata_max_bytes": (0, _INT_MAX),
}

_FIELD_BY_KEY: dict[str, str] = {_key(f.name): f.name for f in fields(CoordinatorConfig)}

KNOWN_KEYS: frozenset[str] = frozenset(_FIELD_BY_KEY)
"""The Kafka property names CoordinatorConfig.from_properties accepts."""
