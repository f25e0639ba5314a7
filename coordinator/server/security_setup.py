"""The server's security settings: Kafka's authorizer keys, and the security shard
(``coordinator.security.shard``) the runtime replays ACLs and SCRAM credentials into.

``authorizer.class.name`` set to Kafka's ``org.apache.kafka.metadata.authorizer.StandardAuthorizer``
(or the older ``kafka.security.authorizer.AclAuthorizer``) turns ACL enforcement on, with
``super.users`` (``User:a;User:b``) and ``allow.everyone.if.no.acl.found`` (default false).
This module imports nothing of ``coordinator.security`` at import time: a server without an
authorizer or a SASL listener pays nothing for it until the coordinator loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from coordinator.config import ConfigError

if TYPE_CHECKING:
    from coordinator.security.shard import SecurityShard

__all__ = [
    "AUTHORIZER_CLASS_NAMES",
    "authorizer_enabled",
    "security_shard",
    "validate_authorizer",
]

AUTHORIZER_CLASS_NAMES = frozenset({
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
})


def authorizer_enabled(properties: Mapping[str, str]) -> bool:
    """Whether ``authorizer.class.name`` names an authorizer (Kafka: empty means none)."""
    return bool(properties.get("authorizer.class.name", "").strip())


def validate_authorizer(properties: Mapping[str, str]) -> None:
    """ConfigError for an authorizer kcoord does not have or a malformed ``super.users``."""
    name = properties.get("authorizer.class.name", "").strip()
    if name and name not in AUTHORIZER_CLASS_NAMES:
        raise ConfigError(f"authorizer.class.name: {name} is not supported (kcoord has "
                          f"{' and '.join(sorted(AUTHORIZER_CLASS_NAMES))})")
    if properties.get("super.users"):
        from coordinator.security.authorizer import parse_super_users

        try:
            parse_super_users(properties["super.users"])
        except ValueError as exc:
            raise ConfigError(f"super.users: {exc}") from None


def security_shard(properties: Mapping[str, str], mechanisms: Sequence[Any]) -> SecurityShard:
    """The shard the runtime replays security records into: its authorizer from the
    properties, its SCRAM store the one every SASL listener's ``mechanisms``
    (``coordinator.security.mechanisms.SaslMechanisms``) logs in with from now on -- the
    first listener's, holding the ``--sasl-user`` credentials -- so a user created by
    AlterUserScramCredentials can log in on any of them."""
    import uuid

    from coordinator.security.authorizer import StandardAuthorizer
    from coordinator.security.shard import SecurityShard
    from coordinator.security.state import SecurityState

    scram = mechanisms[0].scram_credentials if mechanisms else None
    for each in mechanisms:
        each.scram_credentials = scram
    state = SecurityState(StandardAuthorizer.from_config(properties), scram)
    shard = SecurityShard(state, uuid.uuid4, authorizer_enabled=authorizer_enabled(properties))
    shard.plain_users = [each.plain_users for each in mechanisms]
    return shard
