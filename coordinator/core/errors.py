"""The coordinator core's own exceptions (Kafka's error codes are ``wire.constants.ErrorCode``)."""

from __future__ import annotations

__all__ = ["CoordinatorStateError", "IllegalTransitionError"]


class CoordinatorStateError(RuntimeError):
    """Kafka's IllegalStateException: the coordinator reached a state that must not happen."""


class IllegalTransitionError(CoordinatorStateError):
    """A group state transition that the valid-previous-states table forbids."""
