"""Kafka's TopicPartitions struct of the modern group records (consumer and share groups)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

__all__ = ["TopicPartitions"]


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    """Partitions of one topic, by topic id (Kafka's TopicPartitions struct)."""

    topic_id: uuid.UUID
    partitions: tuple[int, ...]
