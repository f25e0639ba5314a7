"""ACL enforcement: each route's handler behind the checks its route declares (``route.acl``).

Installed only when ``authorizer.class.name`` is set (``startup_stages`` wraps the route
table's handlers with ``authorized_routes``): without an authorizer the handlers are the
routes' own and a request pays nothing for ACLs.

A request is checked before its handler runs, as ``KafkaApis`` does, in the order the route
lists its ACLs. An ``Acl`` with ``entries`` checks each entry the request lists there (each
topic of a Produce, each resource of a DescribeConfigs, each key of a FindCoordinator v4,
each group of an OffsetFetch v8+ and each topic inside it): a denied entry is answered with
its resource type's error (TOPIC_, GROUP_, CLUSTER_ or TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
while the handler serves the rest (``acl_entries``). An ``Acl`` without entries is about the
request's one resource -- the cluster, its group or transactional id (its
``group_id``/``transactional_id``/``key`` field, else the key its routing names) -- and the
first one denied answers the whole request with its error through ``wire.error_response``,
the handler never running. An ``Acl`` with a ``when`` applies only in the case it names
(``_CASES``); the ones about the answer (authorized operations, configs) are left to the
route's ``answer_filter``. A route with an ``answer_filter`` (Metadata, ListGroups,
DescribeGroups, ...) is not checked up front: its filter leaves out or marks what the
principal may not see, and its ``prepare`` (Metadata's) first takes out of the request what
must not even be looked up (``acl_answers``). ``Entries`` marked ``in_answer`` leave out of
the answer what one may not see (DescribeTransactions' topics), and an answer about every
topic (OffsetFetch without topics) leaves out the topics the route's topic ACL denies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from coordinator.security.acl import CLUSTER_NAME, authorization_error
from coordinator.security.authorizer import Action, RequestIdentity, host_address
from coordinator.security.principal import ANONYMOUS
from coordinator.server.acl_entries import (
    Denied,
    entries_of,
    hide_answer_entries,
    serve_allowed,
)
from coordinator.server.context import group_runtime
from coordinator.server.route import Acl, AnyOf, EachKey, Entries, OneKey, Route
from coordinator.server.waiters import ReadyReply
from wire.bounded_cache import BoundedCache
from wire.constants import AclOperation, ErrorCode, ResourceType
from wire.error_response import error_response

if TYPE_CHECKING:
    from coordinator.security.authorizer import StandardAuthorizer
    from coordinator.server.apis import RouteTable
    from coordinator.server.context import RequestContext
    from wire import DecodedRequest

__all__ = ["Authorized", "authorized_routes", "identity_of", "security_of"]

#: The cases a route's ``Acl.when`` names in which Kafka makes the check (any other
#: ``when`` describes a check made on the answer, by the route's ``answer_filter``).
_CASES: dict[str, Callable[[int, Any], bool]] = {
    "": lambda _version, _body: True,
    "from a follower": lambda _version, body: body.get("replica_id", -1) >= 0,
    "from a consumer": lambda _version, body: body.get("replica_id", -1) < 0,
    "v4+: from a broker": lambda version, _body: version >= 4,
    "v0-3": lambda version, _body: version < 4,
    "key_type 0": lambda _version, body: body.get("key_type", 0) == 0,
    "key_type 1": lambda _version, body: body.get("key_type", 0) == 1,
    "with a transactional id": lambda _version, body: body.get("transactional_id") is not None,
    "transactional records": lambda _version, body: body.get("transactional_id") is not None,
}
#: The request field naming the one resource of a type a request is about.
_RESOURCE_FIELDS = {ResourceType.GROUP: ("group_id", "key"),
                    ResourceType.TRANSACTIONAL_ID: ("transactional_id", "key")}


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
    return group_runtime(ctx).security


def _routing_keys(route: Route, version: int, body: Any) -> list[str]:
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


def _single(acl: Acl, route: Route, request: DecodedRequest) -> list[str]:
    """The one resource of ``acl``'s type the request is about (empty: none)."""
    body = request.body
    if acl.resource is ResourceType.CLUSTER:
        return [CLUSTER_NAME]
    for field in _RESOURCE_FIELDS.get(acl.resource, ()):
        if field in body:
            name = body[field]
            return [] if name is None else [name]
    if acl.resource is ResourceType.TOPIC:
        return []
    return _routing_keys(route, request.api_version, body)


def _applies(acl: Acl, request: DecodedRequest) -> bool:
    case = _CASES.get(acl.when)
    return case is not None and case(request.api_version, request.body)


def _request_entries(acl: Acl) -> tuple[Entries, ...]:
    return tuple(e for e in acl.entries if not e.in_answer)


def _denied_names(authorizer: StandardAuthorizer, identity: RequestIdentity, acl: Acl,
                  names: list[str]) -> list[str]:
    return [n for n in names
            if not authorizer.authorize_one(identity, Action(acl.operation, acl.resource, n))]


class Verdict(NamedTuple):
    """What the checks say: NONE, or the error answering the whole request; and the
    entries denied one by one (each answered alone while the handler serves the rest)."""

    error: ErrorCode = ErrorCode.NONE
    denied: tuple[Denied, ...] = ()


ALLOWED_VERDICT = Verdict()


def check(route: Route, request: DecodedRequest, ctx: RequestContext,
          authorizer: StandardAuthorizer, identity: RequestIdentity) -> Verdict:
    """The route's ACLs in order: an ACL on the request's entries denies entry by entry
    (an entry already denied is not looked at again, nor its nested entries); the first
    denied ACL on the request's one resource answers the whole request."""
    denied: list[Denied] = []
    denied_parents: set[tuple[str, int]] = set()
    for acl in route.acl:
        if isinstance(acl, AnyOf):
            error, topic_acl = _check_any_of(acl, route, request, ctx, authorizer, identity)
            if error != ErrorCode.NONE:
                return Verdict(error)
            if topic_acl is None:
                continue
            acl = topic_acl
        if not _applies(acl, request):
            continue
        found = [f for entries in _request_entries(acl) for f in entries_of(
            entries, request.body, acl.resource, ctx, denied_parents)]
        if found:
            refused = set(_denied_names(authorizer, identity, acl,
                                        list(dict.fromkeys(f.name for f in found))))
            error = authorization_error(acl.resource)
            for f in found:
                if f.name in refused:
                    denied.append(Denied(f, error))
                    if f.entries.within is None:
                        denied_parents.add((f.entries.field, f.position))
            continue
        if _lists_entries(acl, request.body):
            continue  # (none of its entries is of this ACL's kind)
        if _denied_names(authorizer, identity, acl, _single(acl, route, request)):
            return Verdict(authorization_error(acl.resource))
    return Verdict(denied=tuple(denied)) if denied else ALLOWED_VERDICT


def _lists_entries(acl: Acl, body: Any) -> bool:
    """Whether the request has entries where ``acl`` looks for them (else the ACL is
    about the request's one resource: OffsetFetch v0-7's group, FindCoordinator v0-3's
    key)."""
    return any(body.get((e.within or e).field) for e in _request_entries(acl))


def _check_any_of(any_of: AnyOf, route: Route, request: DecodedRequest,
                  ctx: RequestContext, authorizer: StandardAuthorizer,
                  identity: RequestIdentity) -> tuple[ErrorCode, Acl | None]:
    """Allowed if one alternative allows its resource; else an alternative on entries is
    checked as any ACL on entries (CreateTopics: CLUSTER CREATE, else CREATE per topic).
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
        if acl.entries:
            return ErrorCode.NONE, acl
        if not _denied_names(authorizer, identity, acl, _single(acl, route, request)):
            return ErrorCode.NONE, None
        last = authorization_error(acl.resource)
    return last, None


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
            identity, Action(acl.operation, ResourceType.TOPIC,
                             t["name"] if "name" in t else t["topic_name"]))]

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

    __slots__ = ("__name__", "__qualname__", "_answer_acls", "_every_topic_acl",
                 "_inner_submit", "inner",
                 "route")

    def __init__(self, route: Route) -> None:
        self.route = route
        self.inner = route.handler
        #: The topic ACL an answer about every topic (OffsetFetch without topics) is
        #: filtered by: the topics it denies are left out, as Kafka does.
        self._every_topic_acl = next(
            (a for a in route.acl if isinstance(a, Acl) and a.resource is ResourceType.TOPIC
             and not a.when and _request_entries(a)), None)
        #: The ACLs on the answer's entries (DescribeTransactions' topics).
        self._answer_acls = tuple(
            (a, e) for a in route.acl if isinstance(a, Acl) for e in a.entries if e.in_answer)
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
        if verdict.denied:
            answer = await serve_allowed(self.inner, ctx, request, list(verdict.denied))
        else:
            answer = await self.inner(ctx, request)
        if answer is not None and self._answer_acls:
            authorizer, identity = security_of(ctx).state.authorizer, identity_of(ctx)
            for acl, entries in self._answer_acls:

                def allowed(name: str, acl: Acl = acl) -> bool:
                    return bool(authorizer.authorize_one(
                        identity, Action(acl.operation, acl.resource, name)))

                answer = hide_answer_entries(answer, entries, allowed)
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
        if verdict.denied:
            return None  # (served in parts by ``__call__``)
        return self._inner_submit(ctx, request)


def authorized_routes(routes: RouteTable) -> RouteTable:
    """The routes with every handler but the pre-authentication ones (``acl`` empty:
    ApiVersions, SaslHandshake, SaslAuthenticate) behind ``Authorized``."""
    from coordinator.server.apis import RouteTable

    return RouteTable(route if not route.acl else route._replace(handler=Authorized(route))
                      for route in routes.values())

