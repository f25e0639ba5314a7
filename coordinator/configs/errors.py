"""The error a dynamic configuration request's resource is answered with (its own module:
the broker surface's DescribeConfigs raises it for BROKER_LOGGER resources without
importing the config store and every record type, issue 33)."""

from __future__ import annotations

from wire.constants import ErrorCode

__all__ = ["ConfigError"]


class ConfigError(Exception):
    """A resource's answer: Kafka's error code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
