"""ACL enforcement: each route's handler behind the checks its route declares (``route.acl``).

Installed only when ``authorizer.class.name`` is set (``startup_stages`` wraps the route
table's handlers with ``authorized_routes``): without an authorizer the handlers are the
routes' own and a request pays nothing for ACLs.

A request is checked before its handler runs, as ``KafkaApis`` does, in the order the route
lists its ACLs: each ``Acl`` names the request's resources of its type -- the cluster, the
request's group or transactional id (its ``group_id``/``transactional_id`` field, else the
keys its routing names), every topic it names -- and the first one denied answers the whole
request with that resource type's error (TOPIC_, GROUP_, CLUSTER_ or
TRANSACTIONAL_ID_AUTHORIZATION_FAILED) through ``wire.error_response``, the handler never
running. An ``Acl`` with a ``when`` applies only in the case it names; the ones about the
answer (authorized operations, configs) are left to the route's ``answer_filter``. A route
with an ``answer_filter`` (Metadata, ListGroups, DescribeGroups, ...) is not checked up
front: its filter leaves out or marks what the principal may not see, and its ``prepare``
(Metadata's) first takes out of the request what must not even be looked up
(``acl_answers``).

A topic ACL denying only some of the topics a request lists at its top level (Produce to
two topics, a Fetch, an OffsetCommit) is Kafka's partial answer: the handler serves the
request without the denied topics, whose entries answer TOPIC_AUTHORIZATION_FAILED. Topics
listed inside other entries (OffsetFetch v8+'s groups) are all-or-nothing. A request
naming several groups or transactional ids (DeleteGroups, OffsetFetch v8+,
DescribeTransactions) is answered key by key, the denied keys with their error
(``routing.answer_each_key``). An answer about every topic (OffsetFetch without topics)
leaves out the topics the route's topic ACL denies.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from coordinator.security.acl import CLUSTER_NAME, authorization_error
from coordinator.security.authorizer import Action, RequestIdentity, host_address
from coordinator.security.principal import ANONYMOUS
from coordinator.server.api_support import TopicView
from coordinator.server.route import Acl, AnyOf, EachKey, OneKey, Route
from coordinator.server.routing import answer_each_key
from coordinator.server.waiters import ReadyReply
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire.bounded_cache import BoundedCache
from wire.constants import AclOperation, ErrorCode, ResourceType
from wire.error_response import error_response

if TYPE_CHECKING:
    from coordinator.security.authorizer import StandardAuthorizer
    from coordinator.server.apis import RouteTable
    from coordinator.server.context import RequestContext
    from wire import DecodedRequest

__all__ = ["Authorized", "authorized_routes", "identity_of", "security_of"]

# Request fields listing topics (Produce's topic_data, DeleteTopics v0-5's topic_names,
# AddPartitionsToTxn v0-3's), and the lists whose entries list topics of their own
# (OffsetFetch v8+'s groups, AddPartitionsToTxn v4+'s transactions).
_TOPIC_LISTS = ("topics", "topic_data", "topic_names", "v3_and_below_topics")
_NESTED_LISTS = ("groups", "transactions")
#: The resource type of the keys a coordinator's internal topic places.
_KEY_TYPES = {OFFSETS_TOPIC: ResourceType.GROUP,
              TRANSACTION_STATE_TOPIC: ResourceType.TRANSACTIONAL_ID}
def identity_of(ctx: RequestContext) -> RequestIdentity:
    """Who sent the request: its connection's principal and address (the security
    shard keeps them, so an address is put in Java's form once per client, not per request)."""
    conn = ctx.state.connections.get(ctx.connection_id)
    if conn is None:
        principal, peer = ANONYMOUS, ctx.client_host.lstrip("/")
    else:
        principal, peer = conn.principal, conn.peer_host
    identities: BoundedCache[tuple[str, str], RequestIdentity] = security_of(ctx).identities
    identity = identities.get((principal, peer))
    if identity is None:
        identity = identities.put((principal, peer),
                                  RequestIdentity(principal, host_address(peer)))
    return identity


def security_of(ctx: RequestContext) -> Any:
    """The server's security shard (``coordinator.security.shard.SecurityShard``)."""
    return ctx.state.groups.security


def _topic_name(item: Any, ctx: RequestContext) -> str | None:
    """The topic a request's topic entry names: its name, or its id's (Fetch v13+)."""
    if isinstance(item, str):
        return item
    name = item.get("name") or item.get("topic")
    if name:
        return str(name)
    topic_id = item.get("topic_id")
    return TopicView(ctx.state.topics).name_of(topic_id) if isinstance(
        topic_id, uuid.UUID) else None


def _topic_names(body: Any, ctx: RequestContext) -> Iterator[str]:
    for name in _TOPIC_LISTS:
        for item in body.get(name) or ():
            topic = _topic_name(item, ctx)
            if topic:
                yield topic
    for name in _NESTED_LISTS:
        for item in body.get(name) or ():
            if isinstance(item, dict):
                yield from _topic_names(item, ctx)


def _keys(route: Route, version: int, body: Any) -> list[str]:
    routing = route.routing
    if isinstance(routing, EachKey):
        if version < routing.from_version and routing.before is not None:
            routing = routing.before
        else:
            return [routing.key_of(k) for k in body.get(routing.request_field) or ()]
    if isinstance(routing, OneKey):
        key = routing.key(version, body)
        return [] if key is None else [key]
    return []


def _names(acl: Acl, route: Route, request: DecodedRequest, ctx: RequestContext) -> list[str]:
    """The resources of ``acl``'s type this request names (empty: the ACL does not apply)."""
    body, version, when = request.body, request.api_version, acl.when
    kind = acl.resource
    if kind is ResourceType.CLUSTER:
        applies = (not when or (when == "from a follower" and body.get("replica_id", -1) >= 0)
                   or (when == "v4+: from a broker" and version >= 4)
                   or (when == "broker resources"
                       and any(r.get("resource_type") in (4, 8)  # BROKER, BROKER_LOGGER
                               for r in body.get("resources", ()))))
        return [CLUSTER_NAME] if applies else []
    if kind is ResourceType.TOPIC:
        if when == "topic resources":
            return [r["resource_name"] for r in body.get("resources", ())
                    if r.get("resource_type") == 2]
        if when and not (when == "from a consumer" and body.get("replica_id", -1) < 0):
            return []
        return list(dict.fromkeys(_topic_names(body, ctx)))
    if when.startswith("key_type"):  # FindCoordinator: its keys of that type
        if body.get("key_type", 0) != int(when.split()[1]):
            return []
        keys = list(body.get("coordinator_keys") or ())
        return keys or ([body["key"]] if body.get("key") is not None else [])
    if _each_key(route, request, acl):
        return _keys(route, version, body)
    field = "group_id" if kind is ResourceType.GROUP else "transactional_id"
    if field in body:
        name = body[field]
        return [] if name is None else [name]
    if kind is ResourceType.TRANSACTIONAL_ID and when == "v0-3" and version >= 4:
        return []
    return _keys(route, version, body)


def _denied_names(authorizer: StandardAuthorizer, identity: RequestIdentity, acl: Acl,
                  names: list[str]) -> list[str]:
    return [n for n in names
            if not authorizer.authorize_one(identity, Action(acl.operation, acl.resource, n))]


class Verdict(NamedTuple):
    """What the checks say: NONE, or the error answering the whole request; or the topics
    to answer TOPIC_AUTHORIZATION_FAILED while the handler serves the rest."""

    error: ErrorCode = ErrorCode.NONE
    denied_topics: frozenset[str] = frozenset()
    #: A request naming several groups or transactional ids (DeleteGroups, OffsetFetch
    #: v8+, DescribeTransactions): the denied ones and their errors, each answered alone.
    denied_keys: dict[str, ErrorCode] = {}


ALLOWED_VERDICT = Verdict()


def check(route: Route, request: DecodedRequest, ctx: RequestContext,
          authorizer: StandardAuthorizer, identity: RequestIdentity) -> Verdict:
    """The route's ACLs in order: the first denied one answers the whole request, except a
    topic ACL denying some of the topics the request lists at its top level (Produce's,
    Fetch's, OffsetCommit's, ...): those are answered alone, as Kafka does."""
    denied_topics: set[str] = set()
    denied_keys: dict[str, ErrorCode] = {}
    for acl in route.acl:
        if isinstance(acl, AnyOf):
            error, topic_acl = _check_any_of(acl, route, request, ctx, authorizer, identity)
            if error != ErrorCode.NONE:
                return Verdict(error)
            if topic_acl is None:
                continue
            acl = topic_acl
        names = _names(acl, route, request, ctx)
        denied = _denied_names(authorizer, identity, acl, names)
        if not denied:
            continue
        if acl.resource is ResourceType.TOPIC and len(denied) < len(names) and (
                _top_level_topics(request.body)):
            denied_topics.update(denied)
            continue
        if _each_key(route, request, acl):
            denied_keys.update(dict.fromkeys(denied, authorization_error(acl.resource)))
            continue
        return Verdict(authorization_error(acl.resource))
    if denied_keys and denied_topics:  # (both kinds at once: the keys' error for all)
        return Verdict(next(iter(denied_keys.values())))
    if denied_topics or denied_keys:
        return Verdict(denied_topics=frozenset(denied_topics), denied_keys=denied_keys)
    return ALLOWED_VERDICT


def _each_key(route: Route, request: DecodedRequest, acl: Acl) -> bool:
    """Whether ``acl``'s resources are the keys of a request answered key by key."""
    routing = route.routing
    return (isinstance(routing, EachKey) and request.api_version >= routing.from_version
            and acl.resource is _KEY_TYPES.get(routing.topic))


def _top_level_topics(body: Any) -> bool:
    """Whether every topic the request names is an entry of a top-level topic list."""
    return not any(body.get(name) for name in _NESTED_LISTS)


def _check_any_of(any_of: AnyOf, route: Route, request: DecodedRequest,
                  ctx: RequestContext, authorizer: StandardAuthorizer,
                  identity: RequestIdentity) -> tuple[ErrorCode, Acl | None]:
    """Allowed if one alternative allows every resource it names; else a topic alternative
    is checked as any topic ACL (CreateTopics: CLUSTER CREATE, else CREATE per topic).
    InitProducerId's idempotent case (no transactional id): CLUSTER IDEMPOTENT_WRITE or
    WRITE on any topic."""
    if any(a.when == "without one" for a in any_of.acls):
        if request.body.get("transactional_id") is not None:
            return ErrorCode.NONE, None
        if authorizer.authorize_one(identity, Action(AclOperation.IDEMPOTENT_WRITE,
                                                     ResourceType.CLUSTER, CLUSTER_NAME)):
            return ErrorCode.NONE, None
        if authorizer.authorize_by_resource_type(identity, AclOperation.WRITE,
                                                 ResourceType.TOPIC):
            return ErrorCode.NONE, None
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None
    last = ErrorCode.NONE
    for acl in any_of.acls:
        if acl.when:
            return ErrorCode.NONE, None  # (about auto-creation: not checked up front)
        if acl.resource is ResourceType.TOPIC:
            return ErrorCode.NONE, acl
        if not _denied_names(authorizer, identity, acl, _names(acl, route, request, ctx)):
            return ErrorCode.NONE, None
        last = authorization_error(acl.resource)
    return last, None


def _keeping_topics(request: DecodedRequest, ctx: RequestContext,
                    keep: Callable[[str], bool]) -> DecodedRequest:
    """``request`` with only the top-level topic entries whose topic ``keep`` accepts."""
    body = copy.copy(request.body)
    for name in _TOPIC_LISTS:
        items = body.get(name)
        if items:
            body[name] = [item for item in items if keep(_topic_name(item, ctx) or "")]
    return dataclasses.replace(request, body=body)


def _merged(answer: Any, denied: dict[str, Any]) -> Any:
    """The handler's answer for the allowed topics with the denied topics' entries added
    (a new dict: an answer may be a shared constant)."""
    merged = dict(answer)
    for name, entries in denied.items():
        if isinstance(entries, list) and isinstance(merged.get(name), list):
            merged[name] = [*merged[name], *entries]
    return merged


def _error_answer(request: DecodedRequest, error: ErrorCode) -> dict[str, Any]:
    """``wire.error_response``; AlterUserScramCredentials' results are by user, from its
    deletions and its upsertions both (Kafka's getErrorResponse)."""
    answer = error_response(request, error)
    body = request.body
    if "upsertions" in body:
        answer["results"] = [{"user": u["name"], "error_code": error}
                             for u in [*body["deletions"], *body["upsertions"]]]
    return answer


def _asks_every_topic(body: Any) -> bool:
    """Whether the request asks about every topic (OffsetFetch's null topics, v0-7 or per
    group in v8+)."""
    return body.get("topics", ()) is None or any(
        isinstance(group, dict) and group.get("topics", ()) is None
        for group in body.get("groups") or ())


def _hiding_topics(answer: Any, body: Any, acl: Acl, authorizer: StandardAuthorizer,
                   identity: RequestIdentity) -> Any:
    """The answer without the topics ``acl`` denies where the request asked about every
    topic (a new dict: the handler's may be shared)."""

    def allowed(topics: Any) -> list[Any]:
        return [t for t in topics or () if authorizer.authorize_one(
            identity, Action(acl.operation, ResourceType.TOPIC, t["name"]))]

    answer = dict(answer)
    if body.get("topics", ()) is None and "topics" in answer:
        answer["topics"] = allowed(answer["topics"])
    every = {g["group_id"] for g in body.get("groups") or ()
             if isinstance(g, dict) and g.get("topics", ()) is None}
    if every and "groups" in answer:
        answer["groups"] = [{**g, "topics": allowed(g.get("topics"))}
                            if g["group_id"] in every else g for g in answer["groups"]]
    return answer


class Authorized:
    """``route``'s handler behind its ACLs (and its ``answer_filter``, if any)."""

    __slots__ = ("__name__", "__qualname__", "_every_topic_acl", "_inner_submit", "inner",
                 "route")

    def __init__(self, route: Route) -> None:
        self.route = route
        self.inner = route.handler
        #: The topic ACL an answer about every topic (OffsetFetch without topics) is
        #: filtered by: the topics it denies are left out, as Kafka does.
        self._every_topic_acl = next(
            (a for a in route.acl if isinstance(a, Acl) and a.resource is ResourceType.TOPIC
             and not a.when), None)
        self._inner_submit = getattr(route.handler, "submit", None)
        self.__name__ = getattr(route.handler, "__name__", "handler")
        self.__qualname__ = f"authorized({self.__name__})"

    def _verdict(self, ctx: RequestContext, request: DecodedRequest) -> Verdict:
        if self.route.answer_filter is not None:
            return ALLOWED_VERDICT
        security = security_of(ctx)
        return check(self.route, request, ctx, security.state.authorizer, identity_of(ctx))

    async def __call__(self, ctx: RequestContext, request: DecodedRequest) -> Any:
        if not ctx.state.loaded.is_set():  # the ACLs are known once the log is replayed
            await ctx.state.loaded.wait()
        verdict = self._verdict(ctx, request)
        if verdict.error != ErrorCode.NONE:
            return _error_answer(request, verdict.error)
        answer_filter = self.route.answer_filter
        if answer_filter is not None:
            authorizer, identity = security_of(ctx).state.authorizer, identity_of(ctx)
            prepare = getattr(answer_filter, "prepare", None)
            served = request if prepare is None else prepare(request, ctx, authorizer, identity)
            answer = await self.inner(ctx, served)
            return None if answer is None else answer_filter(answer, request, authorizer,
                                                             identity)
        if verdict.denied_keys:
            routing = self.route.routing
            assert isinstance(routing, EachKey)
            errors = verdict.denied_keys
            answer = await answer_each_key(self.inner, ctx, request, routing,
                                           lambda key: errors.get(key, ErrorCode.NONE))
        elif verdict.denied_topics:
            denied = verdict.denied_topics
            answer = await self.inner(ctx, _keeping_topics(request, ctx,
                                                           lambda t: t not in denied))
            if answer is not None:
                answer = _merged(answer, error_response(
                    _keeping_topics(request, ctx, denied.__contains__),
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        else:
            answer = await self.inner(ctx, request)
        topic_acl = self._every_topic_acl
        if answer is not None and topic_acl is not None and _asks_every_topic(request.body):
            answer = _hiding_topics(answer, request.body, topic_acl,
                                    security_of(ctx).state.authorizer, identity_of(ctx))
        return answer

    def submit(self, ctx: RequestContext, request: DecodedRequest) -> Any:
        """The pipelined path (OffsetCommit, Heartbeat): checked, then the route's own
        ``submit``; None (the caller awaits the handler) before the server is loaded."""
        if self._inner_submit is None or not ctx.state.loaded.is_set():
            return None
        verdict = self._verdict(ctx, request)
        if verdict.error != ErrorCode.NONE:
            return ReadyReply(_error_answer(request, verdict.error))
        if verdict.denied_topics or verdict.denied_keys:
            return None  # (served in parts by ``__call__``)
        return self._inner_submit(ctx, request)


def authorized_routes(routes: RouteTable) -> RouteTable:
    """The routes with every handler but the pre-authentication ones (``acl`` empty:
    ApiVersions, SaslHandshake, SaslAuthenticate) behind ``Authorized``."""
    from coordinator.server.apis import RouteTable

    return RouteTable(route if not route.acl else route._replace(handler=Authorized(route))
                      for route in routes.values())

