"""The answers an authorizer filters rather than refuses (a route's ``answer_filter``,
applied by ``coordinator.server.authorization`` only when an authorizer is configured):
what the principal may not DESCRIBE is left out or marked, as Kafka's ``KafkaApis`` does,
and the authorized-operations fields a request asked for are the principal's.

- Metadata: all topics asked for -- the topics one may not DESCRIBE are left out; named
  topics -- those get TOPIC_AUTHORIZATION_FAILED, and so do unknown ones one may not create
  (neither is looked up or auto-created: the filter's ``prepare`` leaves them out first).
- ListGroups: every group with CLUSTER DESCRIBE, else only those one may DESCRIBE.
- DescribeGroups, ConsumerGroupDescribe: a group one may not DESCRIBE answers
  GROUP_AUTHORIZATION_FAILED.
- ListTransactions: only the transactional ids one may DESCRIBE.
- DescribeCluster (and the rest): the authorized-operations bitsets.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING, Any

from coordinator.server.api_support import NO_AUTHORIZED_OPERATIONS as AUTHORIZED_OPERATIONS_OMITTED
from wire.constants import AclOperation, ErrorCode, ResourceType
from wire.kafka_uuid import ZERO_UUID

if TYPE_CHECKING:
    from coordinator.security.authorizer import RequestIdentity, StandardAuthorizer
    from coordinator.server.context import RequestContext
    from wire import DecodedRequest

__all__ = ["fill_cluster_operations", "filter_described_groups", "filter_listed", "filter_metadata"]



def _may(authorizer: StandardAuthorizer, identity: RequestIdentity, operation: AclOperation,
         kind: ResourceType, name: str | None = None) -> bool:
    """(``coordinator.security`` is not imported here: this module is imported with the
    Metadata route, answered before anything else at startup.)"""
    if name is None:
        return authorizer.allows(identity, operation, kind)  # the cluster
    return authorizer.allows(identity, operation, kind, name)


def fill_cluster_operations(answer: dict[str, Any], request: DecodedRequest,
                            authorizer: StandardAuthorizer,
                            identity: RequestIdentity) -> dict[str, Any]:
    """The cluster's authorized operations, where the answer carries them: 0 without
    DESCRIBE on the cluster (Kafka's DescribeCluster and Metadata v8-10)."""
    if answer.get("cluster_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED) != (
            AUTHORIZED_OPERATIONS_OMITTED):
        operations = 0
        if _may(authorizer, identity, AclOperation.DESCRIBE, ResourceType.CLUSTER):
            operations = authorizer.authorized_operations(identity, ResourceType.CLUSTER)
        answer = {**answer, "cluster_authorized_operations": operations}
    return answer


class MetadataAnswer:
    """Metadata: ``prepare`` leaves out of the request the named topics one may not DESCRIBE,
    and the unknown ones one may not create (neither CLUSTER nor TOPIC CREATE), so none is
    auto-created; the filter answers those TOPIC_AUTHORIZATION_FAILED and leaves out of an
    all-topics answer what one may not DESCRIBE (Kafka's handleTopicMetadataRequest)."""

    __slots__ = ()

    def prepare(self, request: DecodedRequest, ctx: RequestContext,
                authorizer: StandardAuthorizer, identity: RequestIdentity) -> DecodedRequest:
        body = request.body
        topics = body.get("topics")
        if not topics:
            return request
        store = ctx.state.topics
        auto_create = bool(body.get("allow_auto_topic_creation", True))
        cluster_create = _may(authorizer, identity, AclOperation.CREATE, ResourceType.CLUSTER)

        def served(name: str | None) -> bool:
            if name is None:  # (by id: its name is checked in the answer)
                return True
            if not _may(authorizer, identity, AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                return False
            return (cluster_create or not auto_create or store is None
                    or store.get(name) is not None
                    or _may(authorizer, identity, AclOperation.CREATE, ResourceType.TOPIC, name))

        kept = [t for t in topics if served(t.get("name"))]
        if len(kept) == len(topics):
            return request
        served_body = copy.copy(body)
        served_body["topics"] = kept
        return dataclasses.replace(request, body=served_body)

    def __call__(self, answer: dict[str, Any], request: DecodedRequest,
                 authorizer: StandardAuthorizer, identity: RequestIdentity) -> dict[str, Any]:
        requested = request.body.get("topics")
        named = requested is not None
        topics = []
        for entry in answer.get("topics", ()):
            name = entry.get("name")
            if name is None or _may(authorizer, identity, AclOperation.DESCRIBE,
                                    ResourceType.TOPIC, name):
                operations = entry.get("topic_authorized_operations",
                                       AUTHORIZED_OPERATIONS_OMITTED)
                if name is not None and operations != AUTHORIZED_OPERATIONS_OMITTED:
                    entry = {**entry, "topic_authorized_operations":
                             authorizer.authorized_operations(identity, ResourceType.TOPIC, name)}
                topics.append(entry)
            elif named:
                topics.append(_denied_topic(name))
        answered = {entry.get("name") for entry in topics}
        for topic in requested or ():
            name = topic.get("name")
            if name is not None and name not in answered:  # left out by ``prepare``
                answered.add(name)
                topics.append(_denied_topic(name))
        return fill_cluster_operations({**answer, "topics": topics}, request, authorizer,
                                       identity)


def _denied_topic(name: str) -> dict[str, Any]:
    return {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name,
            "topic_id": ZERO_UUID, "is_internal": False, "partitions": []}


filter_metadata = MetadataAnswer()


def filter_described_groups(answer: dict[str, Any], request: DecodedRequest,
                            authorizer: StandardAuthorizer,
                            identity: RequestIdentity) -> dict[str, Any]:
    """DescribeGroups and ConsumerGroupDescribe."""
    groups = []
    for group in answer.get("groups", ()):
        group_id = group["group_id"]
        if not _may(authorizer, identity, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            groups.append({"group_id": group_id,
                           "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED,
                           "error_message": None, "members": []})
            continue
        if group.get("authorized_operations", AUTHORIZED_OPERATIONS_OMITTED) != (
                AUTHORIZED_OPERATIONS_OMITTED):
            group = {**group, "authorized_operations": authorizer.authorized_operations(
                identity, ResourceType.GROUP, group_id)}
        groups.append(group)
    return {**answer, "groups": groups}


def filter_listed(field: str, key: str, kind: ResourceType, cluster_lists_all: bool) -> Any:
    """A listing's filter: ``answer[field]``'s entries whose ``key`` the principal may
    DESCRIBE (every one with CLUSTER DESCRIBE, when ``cluster_lists_all``: ListGroups)."""

    def keep_described(answer: dict[str, Any], request: DecodedRequest,
                       authorizer: StandardAuthorizer,
                       identity: RequestIdentity) -> dict[str, Any]:
        if cluster_lists_all and _may(authorizer, identity, AclOperation.DESCRIBE,
                                      ResourceType.CLUSTER):
            return answer
        return {**answer, field: [e for e in answer.get(field, ())
                                  if _may(authorizer, identity, AclOperation.DESCRIBE, kind,
                                          e[key])]}

    return keep_described
