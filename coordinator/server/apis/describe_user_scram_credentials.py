"""DescribeUserScramCredentials (50), version 0: each user's mechanisms and iteration
counts (every user when none is named), never salts or keys.

Served by the security shard's ``describe_user_scram_credentials``
(``coordinator.security.shard``) through the coordinator runtime
(``coordinator/server/security_apis.py``). Kafka's
``KafkaApis.handleDescribeUserScramCredentialsRequest``
authorizes DESCRIBE on the cluster first.
"""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from coordinator.server.security_apis import security_api
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    security_api("describe_user_scram_credentials"),
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),),
)
