"""Producer id allocation in blocks, persisted before use (Kafka's ``ProducerIdManager``).

In KRaft a broker asks the controller for a block of ``PRODUCER_ID_BLOCK_SIZE`` ids
(``AllocateProducerIds``) and the controller records the block in a ``ProducerIdsRecord``.
Here the coordinator claims a block by emitting that record itself; replay keeps the
highest block end, so after a restart allocation continues in a fresh block and no producer
id is ever handed out twice (unused ids of the last block are skipped, as in Kafka).
"""

from __future__ import annotations

from coordinator.txn.log import ProducerIdsRecord

__all__ = ["ProducerIdManager"]


class ProducerIdManager:
    """Hands out producer ids; ``generate`` returns the id and the record to persist first."""

    __slots__ = ("_block_end", "_block_size", "_broker_id", "_next_block_start", "_next_id")

    def __init__(self, broker_id: int, block_size: int) -> None:
        self._broker_id = broker_id
        self._block_size = block_size
        self._next_block_start = 0
        self._next_id = 0
        self._block_end = 0  # exclusive; no block claimed yet

    @property
    def next_block_start(self) -> int:
        """Where the next block will start (what replay restores)."""
        return self._next_block_start

    def generate(self) -> tuple[int, ProducerIdsRecord | None]:
        """A fresh producer id, and the block record to persist when a new block was claimed."""
        record = None
        if self._next_id >= self._block_end:
            start = self._next_block_start
            self._next_block_start = start + self._block_size
            self._next_id, self._block_end = start, self._next_block_start
            record = ProducerIdsRecord(self._broker_id, -1, self._next_block_start)
        producer_id = self._next_id
        self._next_id += 1
        return producer_id, record

    def replay(self, record: ProducerIdsRecord) -> None:
        """A block was claimed before the restart: never hand out its ids again."""
        if record.next_producer_id > self._next_block_start:
            self._next_block_start = record.next_producer_id
        self._next_id = self._block_end = 0
