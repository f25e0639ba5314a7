"""The one exception the broker surface raises for a request it refuses."""

from __future__ import annotations

from wire import ErrorCode

__all__ = ["BrokerError"]


class BrokerError(Exception):
    """A Kafka error code with Kafka's message for it; handlers put both in the answer."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
