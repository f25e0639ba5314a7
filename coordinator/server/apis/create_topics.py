"""CreateTopics (key 19), versions 0-7, with the checks of Kafka's controller
(``ControllerApis.createTopics`` and ``ReplicationControlManager.createTopics``):

- a name given twice: INVALID_REQUEST "Duplicate topic name." (after the other results);
- an illegal or colliding name ('.' vs '_'): INVALID_TOPIC_EXCEPTION; an existing one:
  TOPIC_ALREADY_EXISTS; a config with a null value: INVALID_CONFIG;
- ``num_partitions`` -1 takes ``num.partitions``; 0 or below -1, or above 10,000 (the
  records Kafka's controller takes in one operation): INVALID_PARTITIONS;
- ``replication_factor`` -1 means ``default.replication.factor`` (1); 0 or below -1, or
  more than the registered brokers (one, or ``--brokers``): INVALID_REPLICATION_FACTOR;
- manual ``assignments`` need both counts at -1 (else INVALID_REQUEST), consecutive
  partition indexes from 0 and replica lists naming registered brokers once
  (else INVALID_REPLICA_ASSIGNMENT). The replica lists' length is the topic's replication
  factor; where the replicas sit is kcoord's own layout (``cluster.Cluster``);
- more than 10,000 partitions in one request (``admin_limits``): POLICY_VIOLATION for
  every topic, nothing created;
- ``validate_only`` checks everything and creates nothing (its topic id is the zero uuid).

v5+ results carry the partition count, replication factor and the topic's explicit
configs (source DYNAMIC_TOPIC_CONFIG); v7 the new topic id.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker import config as broker_config
from coordinator.broker.admin_limits import check_partitions_per_request, yield_between_topics
from coordinator.broker.errors import BrokerError
from coordinator.server.api_support import ZERO_UUID, broker_ids, replication_factor_of, store_of
from coordinator.server.route import Acl, AclOperation, AnyOf, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey, ConfigSource

MAX_PARTITIONS_PER_TOPIC = 10_000

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["MAX_PARTITIONS_PER_TOPIC", "ROUTE", "check_registered", "handle"]



def _replication_factor(requested: int, default: int, brokers: int) -> int:
    if requested == 0 or requested < -1:
        raise BrokerError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        )
    factor = default if requested == -1 else requested
    if factor > brokers:
        raise BrokerError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Unable to replicate the partition {factor} time(s): The target replication "
            f"factor of {factor} cannot be reached because only {brokers} broker(s) are "
            "registered.",
        )
    return factor


def _assigned_partitions(topic: Any, registered: list[int]) -> int:
    """Partition count of a manual assignment, checked as Kafka's controller does."""
    if topic.replication_factor != -1:
        raise BrokerError(
            ErrorCode.INVALID_REQUEST,
            "A manual partition assignment was specified, but replication factor was not "
            "set to -1.",
        )
    if topic.num_partitions != -1:
        raise BrokerError(
            ErrorCode.INVALID_REQUEST,
            "A manual partition assignment was specified, but numPartitions was not set to -1.",
        )
    seen: set[int] = set()
    for assignment in topic.assignments:
        index = assignment.partition_index
        if index in seen:
            raise BrokerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Found multiple manual partition assignments for partition {index}",
            )
        seen.add(index)
        brokers = list(assignment.broker_ids)
        if not brokers:
            raise BrokerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            )
        if len(set(brokers)) != len(brokers):
            raise BrokerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes duplicate replicas.",
            )
        check_registered(brokers, registered)
    if seen != set(range(len(seen))):
        raise BrokerError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "partitions should be a consecutive 0-based integer sequence",
        )
    return len(seen)


def check_registered(brokers: list[int], registered: list[int]) -> None:
    """A manual assignment may only name registered brokers: INVALID_REPLICA_ASSIGNMENT
    otherwise."""
    for broker in brokers:
        if broker not in registered:
            raise BrokerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {broker}, but no such "
                "broker is registered.",
            )


def _configs(topic: Any) -> dict[str, str]:
    configs: dict[str, str] = {}
    nulls = []
    for entry in topic.configs:
        if entry.value is None:
            nulls.append(entry.name)
        else:
            configs[entry.name] = entry.value
    if nulls:
        raise BrokerError(
            ErrorCode.INVALID_CONFIG,
            "Null value not supported for topic configs: " + ",".join(nulls),
        )
    return configs


def _error(name: str, error: BrokerError) -> dict[str, Any]:
    return {"name": name, "error_code": error.code, "error_message": error.message}


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Create (or with validate_only, check) each requested topic."""
    body = request.body
    store = store_of(ctx)
    registered = broker_ids(ctx)
    default_factor = replication_factor_of(ctx, -1)
    default_partitions = broker_config.num_partitions(ctx.state.config)
    counts = Counter(t.name for t in body.topics)
    results: list[dict[str, Any]] = []
    unique = [topic for topic in body.topics if counts[topic.name] == 1]
    try:
        check_partitions_per_request(unique, default_partitions)
    except BrokerError as exc:
        unique = []
        results.extend(_error(topic.name, exc) for topic in body.topics
                       if counts[topic.name] == 1)
    for topic in unique:
        if results:
            await yield_between_topics()
        try:
            store.check_new_topic(topic.name, 1)  # name, existence and collisions first
            configs = _configs(topic)
            if topic.assignments:
                partitions = _assigned_partitions(topic, registered)
                factor = len(topic.assignments[0].broker_ids)
            else:
                factor = _replication_factor(topic.replication_factor, default_factor,
                                             len(registered))
                if topic.num_partitions == 0 or topic.num_partitions < -1:
                    raise BrokerError(
                        ErrorCode.INVALID_PARTITIONS,
                        "Number of partitions was set to an invalid non-positive value.",
                    )
                partitions = (
                    default_partitions if topic.num_partitions == -1 else topic.num_partitions
                )
                if partitions > MAX_PARTITIONS_PER_TOPIC:
                    # Kafka's controller caps the records of one operation (10,000); this
                    # also keeps a 47-byte request from building 2^31 partitions on the loop.
                    raise BrokerError(
                        ErrorCode.INVALID_PARTITIONS,
                        f"Number of partitions {partitions} exceeds the maximum of "
                        f"{MAX_PARTITIONS_PER_TOPIC} per topic.",
                    )
            if body.validate_only:
                topic_id = ZERO_UUID
            else:
                # One broker: the factor is 1 whatever the default, so none is recorded.
                recorded = factor if len(registered) > 1 else -1
                created = store.create_topic(topic.name, partitions, configs, recorded)
                await store.open_logs(created)
                topic_id = created.topic_id
        except BrokerError as exc:
            results.append(_error(topic.name, exc))
            continue
        results.append(
            {
                "name": topic.name,
                "topic_id": topic_id,
                "error_code": ErrorCode.NONE,
                "error_message": None,
                "num_partitions": partitions,
                "replication_factor": factor,
                "configs": [
                    {
                        "name": name,
                        "value": configs[name],
                        "read_only": False,
                        "config_source": ConfigSource.TOPIC_CONFIG,
                        "is_sensitive": False,
                    }
                    for name in sorted(configs)
                ],
            }
        )
    duplicate = BrokerError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    results.extend(_error(name, duplicate) for name, count in counts.items() if count > 1)
    return {"throttle_time_ms": 0, "topics": results}


ROUTE = Route(
    ApiKey.CREATE_TOPICS,
    handle,
    acl=(AnyOf((Acl(ResourceType.CLUSTER, AclOperation.CREATE),
               Acl(ResourceType.TOPIC, AclOperation.CREATE, entries=(Entries("topics"),)))),
         Acl(ResourceType.TOPIC, AclOperation.DESCRIBE_CONFIGS, "configs in the answer")),
)
