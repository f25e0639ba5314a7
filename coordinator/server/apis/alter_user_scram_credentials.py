"""AlterUserScramCredentials (51), version 0: set (salt and salted password, 4096-16384
iterations) or delete users' SCRAM credentials, as Kafka's ScramControlManager; never the
password, which the client never sends. A SASL listener's SCRAM logins use them at once.

Served by the security shard's ``alter_user_scram_credentials``
(``coordinator.security.shard``) through the coordinator runtime
(``coordinator/server/security_apis.py``). Kafka's
``KafkaApis.handleAlterUserScramCredentialsRequest``
authorizes ALTER on the cluster first.
"""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from coordinator.server.security_apis import security_api
from wire.constants import ApiKey

__all__ = ["ROUTE"]

ROUTE = Route(
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    security_api("alter_user_scram_credentials"),
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)
