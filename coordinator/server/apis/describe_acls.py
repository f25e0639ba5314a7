"""DescribeAcls (29), versions 1-3: the ACLs a filter matches, grouped by resource pattern.
Without ``authorizer.class.name``, SECURITY_DISABLED as Kafka.

Served by the security shard's ``describe_acls``
(``coordinator.security.shard``) through the coordinator runtime
(``coordinator/server/security_apis.py``). Kafka's ``AclApis``
authorizes DESCRIBE on the cluster first.
"""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from coordinator.server.security_apis import security_api
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.DESCRIBE_ACLS,
    security_api("describe_acls"),
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),),
)
