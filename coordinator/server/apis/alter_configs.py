"""AlterConfigs (key 33), versions 0-2, Kafka's deprecated legacy form: each resource's
dynamic configs become exactly the ones given (a key left out is deleted), for TOPIC,
BROKER (this broker's id or the cluster-wide default; only the keys Kafka makes dynamic)
and GROUP resources, with Kafka's validation and messages (``coordinator.configs.store``).
Written and applied as IncrementalAlterConfigs' records are
(``coordinator.server.config_shard``); ``validate_only`` writes nothing. v2 is flexible.
"""

from __future__ import annotations

from coordinator.server.config_shard import handle_alter_configs
from coordinator.server.route import AclOperation, Route, config_resource_acls
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.ALTER_CONFIGS,
    handle_alter_configs,
    acl=config_resource_acls(AclOperation.ALTER_CONFIGS),
)
