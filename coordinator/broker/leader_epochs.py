"""One partition's leader-epoch history: Kafka's ``LeaderEpochFileCache``, derived from the log.

Kafka keeps a checkpoint file of (leader epoch, start offset) entries beside each log. kcoord
keeps no second file: every batch is stored stamped with the leader epoch it was appended in
(``PartitionLog.append``), so the history is read off the batches as they are appended or
restored -- a restart rebuilds the same entries from the same log. Rules, as Kafka's:

- A batch stamped with an epoch newer than the latest entry starts that epoch at its base
  offset (``assign``). kcoord's log never truncates its end, so an older stamp (a
  transaction marker written with the epoch of the partition's last produce) adds nothing.
- Moving the log start offset up (DeleteRecords, retention) drops the entries that started
  below it, keeping the last of them moved up to the new start (``truncateFromStart``).
- The leader's current epoch counts as the latest entry even before a batch carries it,
  starting at the log end offset: Kafka assigns it when the broker becomes leader
  (``Partition.makeLeader``). It is the cluster model's (``cluster.json``), not stored here.

``end_offset_for`` is ``LeaderEpochFileCache.endOffsetFor``: the end offset of an epoch is the
start offset of the next larger epoch, or the log end offset for the latest one.

The log cleaner removes batches but, as Kafka's cache, this history keeps its entries; after a
restart the entries are read from the batches the cleaner kept, so an epoch may start later
than it did or be gone (its end is then the next kept epoch's start). Either way an end
offset is never earlier than the true one, so a consumer never sees a truncation that did not
happen.
"""

from __future__ import annotations

from bisect import bisect_right

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "LeaderEpochs"]

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
_UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


class LeaderEpochs:
    """The (epoch, start offset) entries of one partition, oldest first."""

    __slots__ = ("_epochs", "_starts")

    def __init__(self) -> None:
        self._epochs: list[int] = []
        self._starts: list[int] = []

    @property
    def entries(self) -> list[tuple[int, int]]:
        """(epoch, start offset) pairs, oldest first."""
        return list(zip(self._epochs, self._starts, strict=True))

    def assign(self, epoch: int, start_offset: int) -> None:
        """A batch stamped ``epoch`` was taken at ``start_offset``."""
        if epoch >= 0 and (not self._epochs or epoch > self._epochs[-1]):
            self._epochs.append(epoch)
            self._starts.append(start_offset)

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at ``start_offset``: the epochs that started at or below it
        are gone but the last of them, which now starts there."""
        gone = bisect_right(self._starts, start_offset)
        if gone:
            epoch = self._epochs[gone - 1]
            del self._epochs[:gone], self._starts[:gone]
            self._epochs.insert(0, epoch)
            self._starts.insert(0, start_offset)

    def end_offset_for(self, requested: int, current_epoch: int,
                       log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for ``requested`` on the leader of ``current_epoch``:
        the largest known epoch <= ``requested`` and the start of the next one (the log end
        for the latest); ``requested`` itself when it is older than every known epoch;
        (-1, -1) when it is undefined or newer than every known epoch."""
        epochs, starts = self._epochs, self._starts
        if current_epoch >= 0 and (not epochs or current_epoch > epochs[-1]):
            epochs, starts = [*epochs, current_epoch], [*starts, log_end_offset]
        if requested == UNDEFINED_EPOCH or not epochs:
            return _UNDEFINED
        if requested == epochs[-1]:
            return requested, log_end_offset
        higher = bisect_right(epochs, requested)  # the first epoch > requested
        if higher == len(epochs):
            return _UNDEFINED
        if higher == 0:
            return requested, starts[0]
        return epochs[higher - 1], starts[higher]
