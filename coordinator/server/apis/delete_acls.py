"""DeleteAcls (31), versions 1-3: remove the ACLs each filter matches, reporting them.
Without ``authorizer.class.name``, SECURITY_DISABLED as Kafka.

Served by the security shard's ``delete_acls``
(``coordinator.security.shard``) through the coordinator runtime
(``coordinator/server/security_apis.py``). Kafka's ``AclApis``
authorizes ALTER on the cluster first.
"""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from coordinator.server.security_apis import security_api
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.DELETE_ACLS,
    security_api("delete_acls"),
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)
