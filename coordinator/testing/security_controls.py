"""Users and ACLs at run time, for the test double (``KcoordServer``'s methods) and the HTTP
control API (``/users``, ``/acls``).

Each change goes the way an AdminClient's does -- through the security shard
(``coordinator.security.shard``), persisted in the data directory, then applied -- so what
a test adds is what a restarted server has. A user gets both SCRAM credentials (salted,
4096 iterations, one AlterUserScramCredentials change per mechanism, as Kafka requires) and,
on a SASL listener, a PLAIN credential (in memory, as Kafka's JAAS users are). Passwords
are never kept, logged or answered.

ACLs are given with Kafka's names or codes::

    {"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
     "principal": "User:alice", "host": "*", "operation": "READ", "permission_type": "ALLOW"}

(``pattern_type`` defaults to LITERAL, ``host`` to ``*``, ``permission_type`` to ALLOW.)
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from enum import IntEnum
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from wire.constants import (
    AclOperation,
    AclPermissionType,
    ErrorCode,
    PatternType,
    ResourceType,
    ScramMechanism,
)

if TYPE_CHECKING:
    from coordinator.server.app import RunningServer

__all__ = ["SecurityControls", "add_user", "create_acls", "delete_acls", "describe_acls",
           "describe_users"]

E = TypeVar("E", bound=IntEnum)
_ACL_FIELDS = (("resource_type", ResourceType), ("pattern_type", PatternType),
               ("operation", AclOperation), ("permission_type", AclPermissionType))


def _code(kind: type[E], value: Any, field: str) -> E:
    """A Kafka code from its name ("TOPIC", "read") or number."""
    try:
        if isinstance(value, str):
            return kind[value.strip().upper()]
        if isinstance(value, int) and not isinstance(value, bool):
            return kind(value)
    except (KeyError, ValueError):
        pass
    raise ValueError(f"{field}: {value!r} is not one of {', '.join(m.name for m in kind)}")


def _acl_entry(acl: Mapping[str, Any]) -> SimpleNamespace:
    """A CreateAcls creation from a test's ACL (ValueError naming what is wrong)."""
    if not isinstance(acl, Mapping):
        raise ValueError("an ACL is an object")
    values = {**{"pattern_type": "LITERAL", "host": "*", "permission_type": "ALLOW"}, **acl}
    for key in ("resource_type", "resource_name", "principal", "operation"):
        if key not in values:
            raise ValueError(f"an ACL needs {key}")
    codes = {field: _code(kind, values[field], field) for field, kind in _ACL_FIELDS}
    for field in ("resource_name", "principal", "host"):
        if not isinstance(values[field], str):
            raise ValueError(f"{field} must be a string")
    return SimpleNamespace(resource_type=codes["resource_type"],
                           resource_name=values["resource_name"],
                           resource_pattern_type=codes["pattern_type"],
                           principal=values["principal"], host=values["host"],
                           operation=codes["operation"],
                           permission_type=codes["permission_type"])


async def _run(running: RunningServer, name: str, body: Any) -> dict[str, Any]:
    from coordinator.security.shard import SecurityShard

    runtime = running.server.runtime
    no_context: Any = None  # (the security shard's handlers read only the body)
    answer: dict[str, Any] = await runtime.call(getattr(SecurityShard, name), no_context, body,
                                                runtime.security)
    return answer


async def add_user(running: RunningServer, name: str, password: str,
                   iterations: int = 4096) -> None:
    """A user with both SCRAM credentials (and PLAIN on a SASL listener)."""
    from coordinator.security.scram_credentials import salted_password

    if not isinstance(name, str) or not name or not isinstance(password, str) or not password:
        raise ValueError("a user needs a non-empty name and password")
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
        salt = secrets.token_bytes(32)
        upsertion = SimpleNamespace(name=name, mechanism=mechanism, iterations=iterations,
                                    salt=salt, salted_password=salted_password(
                                        mechanism, password, salt, iterations))
        answer = await _run(running, "alter_user_scram_credentials",
                            SimpleNamespace(deletions=[], upsertions=[upsertion]))
        [result] = answer["results"]
        if result["error_code"] != ErrorCode.NONE:
            raise ValueError(f"user {name!r}: {result['error_message']}")
    shard: Any = running.server.runtime.security
    for plain_users in shard.plain_users:  # each SASL listener's
        plain_users.add(name, password, secrets.token_bytes)


async def describe_users(running: RunningServer) -> list[dict[str, Any]]:
    """Every SCRAM user: name and (mechanism, iterations) per credential."""
    answer = await _run(running, "describe_user_scram_credentials", SimpleNamespace(users=None))
    return [{"name": r["user"], "credentials": [
        {"mechanism": ScramMechanism(c["mechanism"]).name.replace("_", "-"),
         "iterations": c["iterations"]} for c in r["credential_infos"]]}
        for r in answer["results"]]


async def create_acls(running: RunningServer, acls: Sequence[Mapping[str, Any]]) -> None:
    """Add ``acls`` (ValueError for a malformed one, or one Kafka refuses, or no
    authorizer: then nothing is added)."""
    creations = [_acl_entry(acl) for acl in acls]
    answer = await _run(running, "create_acls", SimpleNamespace(creations=creations))
    errors = [r["error_message"] or ErrorCode(r["error_code"]).name
              for r in answer["results"] if r["error_code"] != ErrorCode.NONE]
    if errors:
        raise ValueError("; ".join(errors))


def _named(resource: Mapping[str, Any], acl: Mapping[str, Any]) -> dict[str, Any]:
    return {"resource_type": ResourceType(resource["resource_type"]).name,
            "resource_name": resource["resource_name"],
            "pattern_type": PatternType(resource["pattern_type"]).name,
            "principal": acl["principal"], "host": acl["host"],
            "operation": AclOperation(acl["operation"]).name,
            "permission_type": AclPermissionType(acl["permission_type"]).name}


_ANY = SimpleNamespace(resource_type_filter=ResourceType.ANY, resource_name_filter=None,
                       pattern_type_filter=PatternType.ANY, principal_filter=None,
                       host_filter=None, operation=AclOperation.ANY,
                       permission_type=AclPermissionType.ANY)


async def describe_acls(running: RunningServer) -> list[dict[str, Any]]:
    """Every ACL, with Kafka's names."""
    answer = await _run(running, "describe_acls", _ANY)
    if answer["error_code"] != ErrorCode.NONE:
        raise ValueError(answer["error_message"])
    return [_named(r, a) for r in answer["resources"] for a in r["acls"]]


async def delete_acls(running: RunningServer) -> int:
    """Remove every ACL; how many there were."""
    answer = await _run(running, "delete_acls", SimpleNamespace(filters=[_ANY]))
    [result] = answer["filter_results"]
    if result["error_code"] != ErrorCode.NONE:
        raise ValueError(result["error_message"])
    return len(result["matching_acls"])


class SecurityControls:
    """``KcoordServer``'s user and ACL methods (it provides ``_require``/``_call_async``)."""

    def _require(self) -> RunningServer:
        raise NotImplementedError

    def _call_async(self, fn: Any) -> Any:
        raise NotImplementedError

    def add_user(self, name: str, password: str) -> None:
        """A user with PLAIN (on a SASL listener) and both SCRAM credentials, persisted."""
        running = self._require()
        self._call_async(lambda: add_user(running, name, password))

    def users(self) -> list[dict[str, Any]]:
        """Every SCRAM user with its mechanisms and iterations (never a password)."""
        running = self._require()
        result: list[dict[str, Any]] = self._call_async(lambda: describe_users(running))
        return result

    def create_acls(self, *acls: Mapping[str, Any]) -> None:
        """Add ACLs (Kafka's names; needs ``authorizer.class.name`` in the config)."""
        running = self._require()
        self._call_async(lambda: create_acls(running, acls))

    def acls(self) -> list[dict[str, Any]]:
        """Every ACL, with Kafka's names."""
        running = self._require()
        result: list[dict[str, Any]] = self._call_async(lambda: describe_acls(running))
        return result

    def delete_acls(self) -> int:
        """Remove every ACL; how many there were."""
        running = self._require()
        count: int = self._call_async(lambda: delete_acls(running))
        return count


async def control_route(running: RunningServer, method: str, parts: list[str],
                        body: Any) -> tuple[int, Any]:
    """The HTTP control API's ``/users`` and ``/acls`` (status, answer); LookupError for
    no such route, ValueError for a bad body."""
    if parts == ["users"] and method == "GET":
        return 200, await describe_users(running)
    if parts == ["users"] and method == "POST":
        if not isinstance(body, dict) or set(body) - {"name", "password"}:
            raise ValueError('body must be {"name": ..., "password": ...}')
        await add_user(running, body.get("name", ""), body.get("password", ""))
        return 201, {"name": body["name"]}  # (never the password)
    if parts == ["acls"] and method == "GET":
        return 200, await describe_acls(running)
    if parts == ["acls"] and method == "POST":
        if not isinstance(body, dict) or not isinstance(body.get("acls"), list):
            raise ValueError('body must be {"acls": [...]}')
        await create_acls(running, body["acls"])
        return 201, {"created": len(body["acls"])}
    if parts == ["acls"] and method == "DELETE":
        return 200, {"removed": await delete_acls(running)}
    raise LookupError(f"no route {method} /{'/'.join(parts)}")
