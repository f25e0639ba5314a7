"""The security state the log rebuilds: SCRAM credentials and ACLs, one replay for both."""

from __future__ import annotations

from coordinator.security.acl_store import AclStore
from coordinator.security.authorizer import StandardAuthorizer
from coordinator.security.scram_credentials import ScramCredentialStore
from storage.records import Record
from storage.security_records import AccessControlEntryKey

__all__ = ["SecurityState"]


class SecurityState:
    """What the security records describe; ``replay`` is the only way it changes."""

    __slots__ = ("acls", "authorizer", "scram")

    def __init__(self, authorizer: StandardAuthorizer | None = None,
                 scram: ScramCredentialStore | None = None) -> None:
        self.authorizer = authorizer or StandardAuthorizer()
        self.acls = AclStore(self.authorizer)
        #: (a SASL listener's store, holding its ``--sasl-user`` credentials, when given)
        self.scram = scram if scram is not None else ScramCredentialStore()

    def replay(self, record: Record) -> None:
        """Apply one security record (``storage.security_records``' keys)."""
        if isinstance(record.key, AccessControlEntryKey):
            self.acls.replay(record)
        else:
            self.scram.replay(record)
