"""IncrementalAlterConfigs (key 44), versions 0-1 (KIP-339): SET, DELETE, APPEND and
SUBTRACT (APPEND/SUBTRACT on LIST keys only) on TOPIC, BROKER (this broker's id, or the
empty name: the cluster-wide default; only the keys Kafka makes dynamic) and GROUP
resources, with Kafka's validation and messages (``coordinator.configs.store``). The records
are written through the coordinator runtime's config shard and applied once durable
(``coordinator.server.config_shard``); ``validate_only`` writes nothing. A BROKER_LOGGER
resource (KIP-412: this broker's id) sets or unsets loggers' levels at once, never persisted
(``coordinator.server.broker_loggers``). v1 is flexible.
"""

from __future__ import annotations

from coordinator.server.config_shard import handle_alter_configs
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    handle_alter_configs,
    acl=(Acl(ResourceType.TOPIC, AclOperation.ALTER_CONFIGS, "topic resources"),
         Acl(ResourceType.CLUSTER, AclOperation.ALTER_CONFIGS,
             "broker resources"),  # BROKER and BROKER_LOGGER
         Acl(ResourceType.GROUP, AclOperation.ALTER_CONFIGS, "group resources")),
)
