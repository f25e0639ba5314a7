"""The pipeline's schema: the columns every parsed entry becomes, the record-type names,
and the decoding of consumer-protocol assignments into readable rows."""

from __future__ import annotations

from typing import Any

from storage.records import MemberMetadata
from wire.bounded_cache import BoundedCache
from wire.consumer_protocol import decode_assignment

__all__ = [
    "COLUMNS",
    "COLUMN_NAMES",
    "CORRUPT",
    "GROUP_METADATA",
    "MEMBER_FIELDS",
    "NOT_NULL",
    "OFFSET_COMMIT",
    "REBALANCE_EVENT",
    "RECORD_TYPES",
    "TORN_TAIL",
    "TXN_OFFSET_COMMIT",
    "Columns",
    "decode_assigned",
    "member_row",
]

#: One chunk: column name -> values, every list as long as the chunk.
Columns = dict[str, list[Any]]

OFFSET_COMMIT = "offset_commit"
GROUP_METADATA = "group_metadata"
REBALANCE_EVENT = "rebalance_event"
#: The end of an offset a transaction staged (a tombstone of record type 102): written right
#: after the offset commit its COMMIT marker makes (or alone, for an ABORT).
TXN_OFFSET_COMMIT = "txn_offset_commit"
TORN_TAIL = "torn_tail"
CORRUPT = "corrupt"
RECORD_TYPES = (OFFSET_COMMIT, GROUP_METADATA, REBALANCE_EVENT, TXN_OFFSET_COMMIT, TORN_TAIL,
                CORRUPT)

#: Fields of one element of ``members`` (Spark SQL types).
MEMBER_FIELDS: tuple[tuple[str, str], ...] = (
    ("member_id", "string"),
    ("group_instance_id", "string"),
    ("client_id", "string"),
    ("client_host", "string"),
    ("session_timeout", "int"),
    ("rebalance_timeout", "int"),
    ("assigned", "array<struct<topic:string,partition:int>>"),
)

#: The pipeline's schema: (column, Spark SQL type). Timestamps are epoch milliseconds as
#: written (-1 = none, as in Kafka's records). Keys and values are exactly the record's.
COLUMNS: tuple[tuple[str, str], ...] = (
    # origin
    ("data_dir", "string"),  # the data directory (absolute path): one kcoord instance
    ("segment", "string"),  # segment file name
    ("position", "bigint"),  # byte offset of the entry in the segment file
    ("log_index", "bigint"),  # entry index (segment base + ordinal): the log order
    ("record_type", "string"),  # one of RECORD_TYPES
    ("tombstone", "boolean"),
    ("timestamp", "bigint"),  # commit / state / event timestamp; null for tombstones
    # keys
    ("group", "string"),
    ("topic", "string"),
    ("partition", "int"),
    # OffsetCommitValue
    ("offset", "bigint"),
    ("leader_epoch", "int"),
    ("metadata", "string"),
    ("commit_timestamp", "bigint"),
    ("expire_timestamp", "bigint"),
    # GroupMetadataValue (and the event's generation)
    ("generation", "int"),
    ("protocol_type", "string"),
    ("protocol", "string"),
    ("leader", "string"),
    ("state_timestamp", "bigint"),
    (
        "members",
        "array<struct<" + ",".join(f"{n}:{t}" for n, t in MEMBER_FIELDS) + ">>",
    ),
    # RebalanceEventValue
    ("event", "string"),
    ("reason", "string"),
    ("event_member_id", "string"),
    ("event_instance_id", "string"),
    ("event_members", "array<string>"),
    ("event_timestamp", "bigint"),
    # torn_tail / corrupt rows
    ("problem", "string"),
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)

#: The columns every row has a value in, whatever its record type (a torn tail or a
#: corrupt entry too: the file, the byte offset, the row's kind): declared non-nullable,
#: so Spark's row conversion skips their null checks. ``log_index`` is null in torn_tail /
#: corrupt rows, the key and value columns wherever the record type has none.
NOT_NULL = frozenset({"data_dir", "segment", "position", "record_type", "tombstone"})

_ASSIGNED_CACHE: BoundedCache[bytes, list[dict[str, Any]] | None] = BoundedCache(4097)


def decode_assigned(assignment: bytes) -> list[dict[str, Any]] | None:
    """A consumer-protocol assignment as [{topic, partition}] (sorted); None when the bytes
    are not a ConsumerProtocolAssignment. An empty assignment is []."""
    cached = _ASSIGNED_CACHE.get(assignment, False)
    if cached is not False:
        return cached  # type: ignore[return-value]
    result: list[dict[str, Any]] | None
    if not assignment:
        result = []
    else:
        try:
            result = sorted(
                (
                    {"topic": topic, "partition": p}
                    for topic, partitions in decode_assignment(assignment)
                    for p in partitions
                ),
                key=lambda d: (d["topic"], d["partition"]),
            )
        except Exception:  # not the consumer protocol (e.g. Connect): no decoded assignment
            result = None
    return _ASSIGNED_CACHE.put(assignment, result)


def member_row(m: MemberMetadata, consumer: bool) -> dict[str, Any]:
    """One element of the ``members`` column."""
    return {
        "member_id": m.member_id,
        "group_instance_id": m.group_instance_id,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "session_timeout": m.session_timeout,
        "rebalance_timeout": m.rebalance_timeout,
        "assigned": decode_assigned(m.assignment) if consumer else None,
    }
