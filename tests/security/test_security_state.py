"""SecurityState: one replay rebuilds SCRAM credentials and ACLs alike."""

from __future__ import annotations

import uuid

from security_support import CountingRandom

from coordinator.security.acl import (
    ANY_ACL_FILTER,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from coordinator.security.acl_store import record_of
from coordinator.security.authorizer import Action, RequestIdentity
from coordinator.security.scram_credentials import ScramMechanism, user_records
from coordinator.security.state import SecurityState
from storage.records import Record

BINDING = AclBinding(
    ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL),
    AccessControlEntry("User:dan", "*", AclOperation.READ, AclPermissionType.ALLOW),
)
READ_T = Action(AclOperation.READ, ResourceType.TOPIC, "t")
DAN = RequestIdentity("User:dan", "1.2.3.4")


def test_security_state_replays_both_kinds_of_record() -> None:
    log: list[Record] = [
        *user_records("dan", "pw", CountingRandom()), record_of(uuid.UUID(int=1), BINDING)
    ]
    state = SecurityState()
    for record in log:
        state.replay(record)
    assert state.scram.lookup("dan", ScramMechanism.SCRAM_SHA_512) is not None
    assert state.authorizer.authorize_one(DAN, READ_T)
    assert state.acls.describe_acls(ANY_ACL_FILTER) == [BINDING]
