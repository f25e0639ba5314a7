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
from coordinator.server.route import AclOperation, Route, config_resource_acls
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.INCREMENTAL_ALTER_CONFIGS,
    handle_alter_configs,
    acl=config_resource_acls(AclOperation.ALTER_CONFIGS),
)
