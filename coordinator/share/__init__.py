"""The share coordinator's sans-I/O core (KIP-932): share partitions, their durable state
and records, ``share.auto.offset.reset``, and the simple assignor. No trio, time, os or
sockets: time is the ``now_ms`` argument; durable changes are returned, and applied only
when their records are appended."""

from .assignor import PartitionAssignorError, simple_assign
from .coordinator import ShareCoordinatorShard
from .durable import DurableState, RecordLog, SharePartitionKey, ShareStateStore
from .offset_reset import initial_start_offset
from .partition import Acquisition, SharePartition, ShareStateChange
from .states import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRecords,
    RecordState,
    ShareError,
    SharePartitionConfig,
)

__all__ = [
    "AcknowledgeType",
    "AcknowledgementBatch",
    "AcquiredRecords",
    "Acquisition",
    "DurableState",
    "PartitionAssignorError",
    "RecordLog",
    "RecordState",
    "ShareCoordinatorShard",
    "ShareError",
    "SharePartition",
    "SharePartitionConfig",
    "SharePartitionKey",
    "ShareStateChange",
    "ShareStateStore",
    "initial_start_offset",
    "simple_assign",
]
