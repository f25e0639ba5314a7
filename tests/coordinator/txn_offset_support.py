"""TxnOffsetCommit and transaction markers driven through the core harness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness import Harness, ctx

from coordinator.core.txn_offsets import (
    TxnMarkerRequest,
    handle_txn_marker,
    handle_txn_offset_commit,
)


def txn_commit_offsets(
    h: Harness,
    group_id: str,
    producer_id: int,
    offsets: Mapping[tuple[str, int], int | tuple[int, str]],
    *,
    member_id: str = "",
    generation: int = -1,
    group_instance_id: str | None = None,
    leader_epoch: int = 10,
) -> dict[tuple[str, int], int]:
    """A TxnOffsetCommit (v3); returns each partition's error code. An offset given as
    (offset, metadata) carries that metadata, else "metadata"."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), spec in offsets.items():
        offset, metadata = spec if isinstance(spec, tuple) else (spec, "metadata")
        by_topic.setdefault(topic, []).append({
            "partition_index": index, "committed_offset": offset,
            "committed_leader_epoch": leader_epoch, "committed_metadata": metadata})
    request = {
        "transactional_id": "txn", "group_id": group_id, "producer_id": producer_id,
        "producer_epoch": 0, "generation_id": generation, "member_id": member_id,
        "group_instance_id": group_instance_id,
        "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}
    token = h.token()
    h.apply(handle_txn_offset_commit(h.coordinator, ctx(3), request, token, h.now))
    return {(t.name, p.partition_index): p.error_code for t in h.reply(token).topics
            for p in t.partitions}

def txn_completion(h: Harness, producer_id: int, group_ids: Sequence[str], committed: bool) -> None:
    """The transaction's marker on the offsets partition of ``group_ids``."""
    token = h.token()
    request: TxnMarkerRequest = {"producer_id": producer_id, "group_ids": list(group_ids),
                                 "committed": committed}
    h.apply(handle_txn_marker(h.coordinator, ctx(0), request, token, h.now))
    h.reply(token)
