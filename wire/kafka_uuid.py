"""Kafka's UUID constants (``org.apache.kafka.common.Uuid``): the one ``ZERO_UUID``.

Apart from ``wire.constants`` because ``uuid`` costs start-up time (it imports ``platform``:
2-20 ms) that the CLI's light paths do not pay; ``wire.fields`` imports this on first use.
"""

from __future__ import annotations

import uuid

__all__ = ["ZERO_UUID"]

#: The all-zero UUID (``Uuid.ZERO_UUID``): no topic id, a uuid field's default.
ZERO_UUID = uuid.UUID(int=0)
