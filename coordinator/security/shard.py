"""The security shard: ACLs and SCRAM credentials as the coordinator runtime drives them
(``coordinator.server.shard.Shard``), persisted in the coordinator's log, then applied.

Its handlers (``create_acls``, ``delete_acls``, ``alter_user_scram_credentials``) answer
with the log records of the change, as the stores make them (``storage.security_records``:
105 an ACL by id, 106 a credential by user and mechanism; a tombstone removes), and the
reply; the runtime appends the records and, once they are durable, ``append_done`` applies
them to ``SecurityState`` -- the same ``replay`` a restart runs. Reads (``describe_acls``,
``describe_user_scram_credentials``) answer from the state at once.

Replay is lenient where the log legitimately disagrees with a fresh state: a tombstone
whose creation compaction already dropped, a credential ``--sasl-user`` created in memory
and later removed, the same ACL created by two requests in flight at once (the second is
skipped: its id is removed with nothing to remove).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any, cast

from coordinator.core.result import EMPTY_RESULT, Reply, ReplyToken, Result
from coordinator.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    from_code,
)
from coordinator.security.acl_store import group_by_resource
from coordinator.security.scram_credentials import ScramDeletion, ScramUpsertion
from coordinator.security.state import SecurityState
from storage.records import Record
from storage.security_records import (
    SECURITY_KEY_TYPES,
    AccessControlEntryKey,
    UserScramCredentialKey,
)
from wire.bounded_cache import BoundedCache
from wire.constants import ErrorCode, ScramMechanism

__all__ = [
    "NO_AUTHORIZER_DESCRIBE_MESSAGE",
    "NO_AUTHORIZER_MESSAGE",
    "SecurityShard",
    "binding_filter",
]

log = logging.getLogger(__name__)

#: Kafka's AclApis answers without an authorizer (SECURITY_DISABLED).
NO_AUTHORIZER_MESSAGE = "No Authorizer is configured."
NO_AUTHORIZER_DESCRIBE_MESSAGE = "No Authorizer is configured on the broker"

FailureAnswer = Callable[[ErrorCode], Any]


def binding_filter(body: Any) -> AclBindingFilter:
    """A DescribeAcls request, or one DeleteAcls filter, as a binding filter."""
    return AclBindingFilter(
        ResourcePatternFilter(from_code(ResourceType, body.resource_type_filter),
                              body.resource_name_filter,
                              from_code(PatternType, body.pattern_type_filter)),
        AccessControlEntryFilter(body.principal_filter, body.host_filter,
                                 from_code(AclOperation, body.operation),
                                 from_code(AclPermissionType, body.permission_type)),
    )


def _binding(creation: Any) -> AclBinding:
    return AclBinding(
        ResourcePattern(from_code(ResourceType, creation.resource_type), creation.resource_name,
                        from_code(PatternType, creation.resource_pattern_type)),
        AccessControlEntry(creation.principal, creation.host,
                           from_code(AclOperation, creation.operation),
                           from_code(AclPermissionType, creation.permission_type)),
    )


def _error(error: AclError | None) -> dict[str, Any]:
    if error is None:
        return {"error_code": ErrorCode.NONE, "error_message": None}
    return {"error_code": error.error_code, "error_message": error.message}


def _matching_acl(binding: AclBinding) -> dict[str, Any]:
    p, e = binding.pattern, binding.entry
    return {"error_code": ErrorCode.NONE, "error_message": None,
            "resource_type": p.resource_type, "resource_name": p.name,
            "pattern_type": p.pattern_type, "principal": e.principal, "host": e.host,
            "operation": e.operation, "permission_type": e.permission_type}


#: How many (principal, address) pairs the shard keeps in Java's form at most.
MAX_IDENTITIES = 4096

class SecurityShard:
    """ACLs and SCRAM credentials behind the runtime's append queue."""

    __slots__ = ("_failures", "enabled", "identities", "new_id", "plain_users", "state")

    def __init__(self, state: SecurityState, new_id: Callable[[], uuid.UUID], *,
                 authorizer_enabled: bool) -> None:
        self.state = state
        self.new_id = new_id
        #: ``authorizer.class.name`` is set: ACLs are enforced, and the ACL APIs served.
        self.enabled = authorizer_enabled
        #: (principal, peer address) -> the identity authorizations use (the server's).
        #: (principal, address) -> RequestIdentity, the address in Java's form once per
        #: client (``coordinator.server.authorization.identity_of``).
        self.identities: BoundedCache[Any, Any] = BoundedCache(MAX_IDENTITIES)
        #: The SASL listeners' PLAIN user tables (in memory, as Kafka's JAAS users): where
        #: the test double adds a user's PLAIN credential.
        self.plain_users: list[Any] = []
        # id(Result) -> how its requester is answered if its append fails.
        self._failures: dict[int, tuple[ReplyToken, FailureAnswer]] = {}

    # ------------------------------------------------------------------ the Shard contract

    def replay(self, record: Record) -> None:
        """Apply one security record (leniently: see the module docstring); any other
        record is not this shard's."""
        key, state = record.key, self.state
        if not isinstance(key, SECURITY_KEY_TYPES):
            return
        try:
            if isinstance(key, AccessControlEntryKey):
                if (state.acls.binding(key.id) is None if record.value is None
                        else state.acls.has(record)):
                    return
            elif isinstance(key, UserScramCredentialKey) and record.value is None and (
                state.scram.lookup(key.name, ScramMechanism(key.mechanism)) is None
            ):
                return
            state.replay(record)
        except ValueError as exc:  # an unknown code in a record: skip it, keep the rest
            log.warning("skipping a security record: %s", exc)

    def on_loaded(self, now_ms: int) -> Result:
        return EMPTY_RESULT

    def append_done(self, result: Result, now_ms: int) -> Result:
        self._failures.pop(id(result), None)
        for record in result.records:
            self.replay(record)
        return EMPTY_RESULT

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        failure = self._failures.pop(id(result), None)
        if failure is None:
            return EMPTY_RESULT
        token, answer = failure
        return Result(replies=(Reply(token, answer(error)),))

    def fire_timer(self, key: Any, now_ms: int) -> Result:
        return EMPTY_RESULT

    def _persist(self, token: ReplyToken, records: Sequence[Record], response: Any,
                 failure: FailureAnswer) -> Result:
        result = Result(tuple(records), (Reply(token, response),))
        if records:
            self._failures[id(result)] = (token, failure)
        return result

    # ------------------------------------------------------------------ handlers
    # (shard, context, request body, reply token, now_ms) -> Result, as the runtime calls them.

    def create_acls(self, ctx: Any, body: Any, token: ReplyToken, now_ms: int) -> Result:
        creations = body.creations
        if not self.enabled:
            answer = {"results": [{"error_code": ErrorCode.SECURITY_DISABLED,
                                   "error_message": NO_AUTHORIZER_MESSAGE} for _ in creations]}
            return Result(replies=(Reply(token, cast(Any, answer)),))
        records, errors = self.state.acls.create_acls(
            [_binding(c) for c in creations], self.new_id)
        response = {"results": [_error(e) for e in errors]}
        return self._persist(token, records, response, lambda code: {"results": [
            {"error_code": code, "error_message": None} for _ in creations]})

    def delete_acls(self, ctx: Any, body: Any, token: ReplyToken, now_ms: int) -> Result:
        filters = body.filters
        if not self.enabled:
            answer = {"filter_results": [
                {"error_code": ErrorCode.SECURITY_DISABLED,
                 "error_message": NO_AUTHORIZER_MESSAGE, "matching_acls": []}
                for _ in filters]}
            return Result(replies=(Reply(token, cast(Any, answer)),))
        records, results = self.state.acls.delete_acls([binding_filter(f) for f in filters])
        response = {"filter_results": [
            {**_error(r.error), "matching_acls": [_matching_acl(b) for b in r.deleted]}
            for r in results]}
        return self._persist(token, records, response, lambda code: {"filter_results": [
            {"error_code": code, "error_message": None, "matching_acls": []}
            for _ in filters]})

    def describe_acls(self, ctx: Any, body: Any, token: ReplyToken, now_ms: int) -> Result:
        if not self.enabled:
            answer: dict[str, Any] = {"error_code": ErrorCode.SECURITY_DISABLED,
                                      "error_message": NO_AUTHORIZER_DESCRIBE_MESSAGE,
                                      "resources": []}
        else:
            found = self.state.acls.describe_acls(binding_filter(body))
            if isinstance(found, AclError):
                answer = {**_error(found), "resources": []}
            else:
                answer = {"error_code": ErrorCode.NONE, "error_message": None, "resources": [
                    {"resource_type": pattern.resource_type, "resource_name": pattern.name,
                     "pattern_type": pattern.pattern_type,
                     "acls": [{"principal": e.principal, "host": e.host,
                               "operation": e.operation, "permission_type": e.permission_type}
                              for e in entries]}
                    for pattern, entries in group_by_resource(found)]}
        return Result(replies=(Reply(token, cast(Any, answer)),))

    def alter_user_scram_credentials(
        self, ctx: Any, body: Any, token: ReplyToken, now_ms: int
    ) -> Result:
        deletions = [ScramDeletion(d.name, d.mechanism) for d in body.deletions]
        upsertions = [ScramUpsertion(u.name, u.mechanism, u.iterations, bytes(u.salt),
                                     bytes(u.salted_password)) for u in body.upsertions]
        records, results = self.state.scram.alter(deletions, upsertions)
        users = [r.user for r in results]
        response = {"results": [{"user": r.user, "error_code": r.error_code,
                                 "error_message": r.error_message} for r in results]}
        return self._persist(token, records, response, lambda code: {"results": [
            {"user": user, "error_code": code, "error_message": None} for user in users]})

    def describe_user_scram_credentials(
        self, ctx: Any, body: Any, token: ReplyToken, now_ms: int
    ) -> Result:
        users = None if body.users is None else [u.name for u in body.users]
        answer = {"error_code": ErrorCode.NONE, "error_message": None, "results": [
            {"user": r.user, "error_code": r.error_code, "error_message": r.error_message,
             "credential_infos": [{"mechanism": m, "iterations": i}
                                  for m, i in r.credential_infos]}
            for r in self.state.scram.describe(users)]}
        return Result(replies=(Reply(token, cast(Any, answer)),))
