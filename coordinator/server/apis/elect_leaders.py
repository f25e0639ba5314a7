"""ElectLeaders (key 43), versions 0-2: preferred and unclean leader election on the
multi-broker model (``cluster.Cluster.elect_leader``), as Kafka's controller answers it
(``ReplicationControlManager.electLeaders``).

- ``election_type`` (v1+; v0 is PREFERRED): PREFERRED (0) or UNCLEAN (1); any other is
  INVALID_REQUEST "Unknown election type N" for the request (top level, v1+) and every
  named partition (``ElectLeadersRequest.getErrorResponse``).
- Named partitions are each answered: NONE (the leader changed, its epoch bumped),
  ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE (the preferred replica is stopped),
  ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean, no live replica), UNKNOWN_TOPIC_OR_PARTITION
  ("No such topic as t" / "No such partition as t-p"), with Kafka's messages.
- ``topic_partitions`` null: every partition is elected, and only those whose answer is
  not ELECTION_NOT_NEEDED are listed (topics with none are left out).
- With one broker it leads every partition as their only replica: ELECTION_NOT_NEEDED.
  The internal topics' partitions are led by their coordinators, their only replicas:
  ELECTION_NOT_NEEDED too.
- A changed leadership is written to ``cluster.json`` before the answer (it survives a
  restart, as the fixture's ``elect_preferred_leaders`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import store_of
from coordinator.server.internal_topics import internal_topic, is_internal
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["PREFERRED", "ROUTE", "UNCLEAN", "handle"]

# Kafka's ElectionType ids.
PREFERRED = 0
UNCLEAN = 1

_MESSAGES = {
    ErrorCode.NONE: None,
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE:
        "Eligible topic partition leaders are not available.",
}


def _elect(ctx: RequestContext, topic: str, partition: int,
           unclean: bool) -> tuple[ErrorCode, str | None]:
    if is_internal(topic):
        count = internal_topic(topic, ctx.state.config,
                               ctx.state.identity.cluster_id).partition_count
        factor = None
    else:
        found = store_of(ctx).get(topic)
        if found is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
        count, factor = len(found.partitions), found.replication_factor
    if not 0 <= partition < count:
        return (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"No such partition as {topic}-{partition}")
    cluster = ctx.state.cluster
    if cluster is None or factor is None:
        code = ErrorCode.ELECTION_NOT_NEEDED
    else:
        code = cluster.elect_leader(topic, partition, factor, unclean)
    return code, _MESSAGES[code]


def _result(partition: int, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {"partition_id": partition, "error_code": code, "error_message": message}


def _refused(requested: Any, election_type: int) -> dict[str, Any]:
    message = f"Unknown election type {election_type}"
    return {"throttle_time_ms": 0, "error_code": ErrorCode.INVALID_REQUEST,
            "replica_election_results": [
                {"topic": t.topic, "partition_result": [
                    _result(p, ErrorCode.INVALID_REQUEST, message) for p in t.partitions]}
                for t in requested or ()]}


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Elect the asked partitions' leaders (module docstring)."""
    body = request.body
    election_type = body.election_type if request.api_version >= 1 else PREFERRED
    if election_type not in (PREFERRED, UNCLEAN):
        return _refused(body.topic_partitions, election_type)
    unclean = election_type == UNCLEAN
    results: list[dict[str, Any]] = []
    if body.topic_partitions is None:
        store = store_of(ctx)
        for name in store.names():
            topic = store.get(name)
            assert topic is not None
            elected = [_result(p.index, *_elect(ctx, name, p.index, unclean))
                       for p in topic.partitions]
            elected = [r for r in elected if r["error_code"] != ErrorCode.ELECTION_NOT_NEEDED]
            if elected:
                results.append({"topic": name, "partition_result": elected})
    else:
        results = [{"topic": t.topic, "partition_result": [
            _result(p, *_elect(ctx, t.topic, p, unclean)) for p in t.partitions]}
            for t in body.topic_partitions]
    changed = any(r["error_code"] == ErrorCode.NONE
                  for t in results for r in t["partition_result"])
    cluster = ctx.state.cluster
    if changed and cluster is not None:
        await cluster.changed()
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "replica_election_results": results}


ROUTE = Route(
    ApiKey.ELECT_LEADERS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)
