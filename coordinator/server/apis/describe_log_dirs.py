"""DescribeLogDirs (key 35), versions 1-4: this broker's log directory and the size of each
partition replica in it, as ``ReplicaManager.describeLogDirs`` answers.

- The one log directory is the data directory (its absolute path). Without one (topics in
  memory) it is reported as ``(memory)``, with the bytes the partitions hold in memory and
  unknown (-1) total and usable bytes.
- ``partition_size``: the bytes of the partition's segment files (``TopicFiles``); the
  offset lag is 0 (no future replica) and ``is_future_key`` false.
- ``topics`` null asks for every partition; otherwise only the named ones, and as Kafka's
  answer groups the directory's logs by topic before filtering them, every topic hosted
  here is listed, a topic none of whose partitions was asked for with no partitions.
  Partitions that do not exist are left out (no error).
- With ``--brokers`` a broker lists the partitions it holds a replica of (the cluster
  model's replicas); they share one store, so every replica reports the same size.
- v3+: top-level ``error_code`` NONE; v4+: the file system's total and usable bytes
  (``statvfs`` of the data directory).
- The internal topics' records live in the coordinators' logs, not in partition logs:
  they are not listed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import store_of
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.broker.topics import Topic, TopicStore
    from coordinator.server.context import RequestContext

__all__ = ["IN_MEMORY_LOG_DIR", "ROUTE", "handle", "log_dir_of"]

#: The log directory reported when topics live in memory.
IN_MEMORY_LOG_DIR = "(memory)"


def log_dir_of(ctx: RequestContext) -> str:
    """This broker's one log directory, as it is reported."""
    data_dir = ctx.state.data_dir
    return os.path.abspath(data_dir) if data_dir else IN_MEMORY_LOG_DIR


def _volume_bytes(data_dir: str | None) -> tuple[int, int]:
    """(total, usable) bytes of the data directory's file system; -1 unknown."""
    if data_dir is None:
        return -1, -1
    try:
        stats = os.statvfs(data_dir)
    except OSError:
        return -1, -1
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


def _size(store: TopicStore, topic: Topic, index: int) -> int:
    files = store.files
    if files is not None:
        return files.partition_bytes(topic.topic_id, index)
    partition = topic.partition(index)
    return 0 if partition is None else partition.size_bytes


def _hosted(ctx: RequestContext, topic: Topic) -> list[int]:
    """The partitions of ``topic`` this broker holds a replica of."""
    cluster = ctx.state.cluster
    indexes = [p.index for p in topic.partitions]
    if cluster is None:
        return indexes
    node_id = ctx.state.identity.node_id
    return [i for i in indexes
            if node_id in cluster.replicas(i, topic.replication_factor, topic.name)]


def _topics(ctx: RequestContext, requested: Any) -> list[dict[str, Any]]:
    store = store_of(ctx)
    wanted: dict[str, set[int]] | None = None
    if requested is not None:
        wanted = {}
        for entry in requested:
            wanted.setdefault(entry.topic, set()).update(entry.partitions)
    out = []
    for name in store.names():
        topic = store.get(name)
        assert topic is not None
        hosted = _hosted(ctx, topic)
        if not hosted:
            continue
        asked = hosted if wanted is None else [i for i in hosted if i in wanted.get(name, ())]
        out.append({"name": name, "partitions": [
            {"partition_index": i, "partition_size": _size(store, topic, i), "offset_lag": 0,
             "is_future_key": False} for i in asked]})
    return out


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The log directory and its partitions' sizes (module docstring)."""
    data_dir = ctx.state.data_dir
    total, usable = _volume_bytes(data_dir)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "results": [{
            "error_code": ErrorCode.NONE,
            "log_dir": log_dir_of(ctx),
            "topics": _topics(ctx, request.body.topics),
            "total_bytes": total,
            "usable_bytes": usable,
        }],
    }


ROUTE = Route(
    ApiKey.DESCRIBE_LOG_DIRS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),),
)
