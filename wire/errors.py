"""The wire layer's own exceptions (Kafka's error codes are in ``wire.constants``)."""

from __future__ import annotations

__all__ = ["CorruptFrame", "FrameTooLarge", "UnsupportedVersion"]


class CorruptFrame(Exception):
    """A frame the codec cannot decode. Carries what is known of the request it came from."""

    def __init__(
        self,
        message: str,
        *,
        api_key: int | None = None,
        api_version: int | None = None,
        correlation_id: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id

    def __str__(self) -> str:
        where = []
        if self.api_key is not None:
            where.append(f"api_key={self.api_key}")
        if self.api_version is not None:
            where.append(f"api_version={self.api_version}")
        if self.correlation_id is not None:
            where.append(f"correlation_id={self.correlation_id}")
        return f"{self.message} ({', '.join(where)})" if where else self.message


class FrameTooLarge(CorruptFrame):
    """A size prefix that is negative or above the configured maximum; refused unread."""


class UnsupportedVersion(CorruptFrame):
    """A request for an API key or version this codec does not implement."""
