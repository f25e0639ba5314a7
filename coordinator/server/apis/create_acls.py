"""CreateAcls (30), versions 1-3: new ACL bindings, validated as Kafka's AclControlManager
(an invalid one answers INVALID_REQUEST with Kafka's message; the rest are created).
Without ``authorizer.class.name``, SECURITY_DISABLED as Kafka.

Served by the security shard's ``create_acls``
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
    ApiKey.CREATE_ACLS,
    security_api("create_acls"),
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)
