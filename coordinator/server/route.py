"""What a route declares: everything the server needs to know about one Kafka API.

Every served API is one module of ``coordinator/server/apis/``, named after the API
(``heartbeat.py`` serves ``ApiKey.HEARTBEAT``), that declares one ``ROUTE``::

    ROUTE = Route(
        ApiKey.HEARTBEAT,
        group_api(handle_heartbeat),          # the handler (server.context.Handler)
        acl=(Acl(ResourceType.GROUP, AclOperation.READ),),  # as KafkaApis authorizes
        routing=OneKey(OFFSETS_TOPIC, field("group_id"), answers_while_loading=True),
        pipelined=True,                       # may be submitted behind pending replies
    )

Adding an API: its wire module (``wire/apis/<api>.py``), its logic (a group core module, or
code in the route module itself, as the broker APIs have), and its route module here --
nothing else. Every fact not given is the quiet default: served by any broker, answered at
once, not pipelined, always advertised; ``acl`` has no default (``ALLOWED``
for the APIs Kafka answers before authentication).

The server's tables (what a connection flushes before, what it watches while parked, what
it pipelines, what is routed to another broker's coordinator, what ApiVersions advertises,
which reads the runtime runs again) are all read off the routes by
``coordinator/server/apis/__init__.py``; nothing else lists API keys. One exception by
floor: which APIs have a hand codec is ``wire.fast_codec``'s one table (wire, the lowest
floor, cannot read the routes; the route table reads ``HAND_CODED_API_KEYS`` from it). This
module is imported before the listener answers, so it holds plain named tuples and enums,
nothing of trio or the codecs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from wire.constants import AclOperation, ApiKey, ConfigResourceType, ResourceType

if TYPE_CHECKING:
    from coordinator.server.context import Handler

__all__ = [
    "ALLOWED",
    "Acl",
    "AclOperation",
    "AnyOf",
    "EachKey",
    "Entries",
    "KeyOf",
    "ListedKeys",
    "OneKey",
    "ResourceType",
    "Route",
    "Routing",
    "config_resource_acls",
    "field",
    "field_below",
]

# --------------------------------------------------------------------------- ACLs
# ``ResourceType`` and ``AclOperation`` are wire's (Kafka's codes), named here too so a
# route module takes its whole vocabulary from this module.


class Entries(NamedTuple):
    """Where a request lists an ``Acl``'s resources one per entry: each entry is authorized
    on its own, as ``KafkaApis`` does. A denied entry is taken out of the request the
    handler serves and answered with the ACL's error (``wire.error_response``'s entry for
    it); the others are served.

    - ``field``: the request's list (``topics``, ``resources``, ``coordinator_keys``).
    - ``name``: the entry's field naming the resource; "" when the entry is the name
      itself; a topic entry without a name is named by its ``topic_id`` (Fetch v13+).
    - ``only``: only the entries whose field holds one of these values (DescribeConfigs'
      topic resources: ``("resource_type", (2,))``).
    - ``within``: the list lies in each entry of this one (OffsetFetch v8+: each group's
      topics); its denied entries are answered inside that entry's answer, if it has no
      error of its own. An entry denied by an earlier ACL is not looked into.
    - ``rest_error``: one denied entry fails the whole request: the allowed entries are
      answered with this error (AddPartitionsToTxn v0-3: OPERATION_NOT_ATTEMPTED).
    - ``in_answer``: the list is the answer's, not the request's: the entries one may not
      access are left out of it (DescribeTransactions' topics).
    """

    field: str
    name: str = "name"
    only: tuple[str, tuple[int, ...]] | None = None
    within: Entries | None = None
    rest_error: int = 0
    in_answer: bool = False


class Acl(NamedTuple):
    """One authorization ``KafkaApis`` makes: ``operation`` on the request's resources of
    ``resource``. With ``entries``, the resources are those entries (each answered on its
    own); without, the one resource the request is about: the cluster, its group or
    transactional id (``group_id``/``transactional_id``/``key`` field, else its routing
    key). ``when`` names the case Kafka checks it in, if not always ("from a follower",
    "key_type 0", ...: ``coordinator.server.authorization`` reads these); any other
    ``when`` describes a check made on the answer (an ``answer_filter``)."""

    resource: ResourceType
    operation: AclOperation
    when: str = ""
    entries: tuple[Entries, ...] = ()


class AnyOf(NamedTuple):
    """Allowed if any one of ``acls`` is (CreateTopics: CLUSTER CREATE, else TOPIC CREATE
    per topic)."""

    acls: tuple[Acl, ...]


def config_resource_acls(operation: AclOperation) -> tuple[Acl, ...]:
    """The config APIs' per-resource checks (Kafka's ConfigHelper and ControllerApis):
    ``operation`` on the cluster for BROKER, BROKER_LOGGER and CLIENT_METRICS resources, on
    the topic for TOPIC ones, on the group for GROUP ones; each denied resource is answered
    with its own error while the others are served."""

    def resources(*types: ConfigResourceType) -> tuple[Entries, ...]:
        return (Entries("resources", "resource_name",
                        only=("resource_type", tuple(int(t) for t in types))),)

    kinds = ConfigResourceType
    return (Acl(ResourceType.TOPIC, operation, entries=resources(kinds.TOPIC)),
            Acl(ResourceType.CLUSTER, operation, entries=resources(
                kinds.BROKER, kinds.BROKER_LOGGER, kinds.CLIENT_METRICS)),
            Acl(ResourceType.GROUP, operation, entries=resources(kinds.GROUP)))


#: The ACL of an API Kafka answers before authentication (ApiVersions, SaslHandshake).
ALLOWED: tuple[Acl | AnyOf, ...] = ()


# --------------------------------------------------------------------------- routing

#: (request version, decoded body) -> the coordinator key, or None when the request has none.
KeyOf = Callable[[int, Any], "str | None"]


def field(name: str) -> KeyOf:
    """The key is the request's field ``name`` (a null one: the request is not routed,
    as InitProducerId without a transactional id)."""
    return lambda _version, body: body[name]


def field_below(version: int, name: str) -> KeyOf:
    """The key is field ``name`` in versions below ``version``; later ones have none."""
    return lambda v, body: body[name] if v < version else None


class OneKey(NamedTuple):
    """Kafka's rule for a request about one group or transactional id: served only on the
    broker coordinating the key, in ``topic``'s partition for it. Elsewhere the whole
    request gets NOT_COORDINATOR; COORDINATOR_LOAD_IN_PROGRESS while that partition loads,
    unless ``answers_while_loading`` (Heartbeat: Kafka's GroupCoordinatorService "blindly
    responds" NONE)."""

    topic: str
    key: KeyOf
    answers_while_loading: bool = False


class EachKey(NamedTuple):
    """A request naming several keys (``request_field``'s entries): each key is answered on
    its own, a foreign one in ``response_field`` as ``{response_key: key, "error_code":
    error, **error_entry}``. Versions below ``from_version`` carry one key (``before``)."""

    topic: str
    request_field: str
    response_field: str
    response_key: str
    key_of: Callable[[Any], str] = str
    error_entry: Mapping[str, Any] = {}
    from_version: int = 0
    before: OneKey | None = None


class ListedKeys(NamedTuple):
    """A listing (ListGroups, ListTransactions): only the keys this broker coordinates
    (``field``'s entries, keyed by ``key_field``), or COORDINATOR_LOAD_IN_PROGRESS while
    any partition of ``topic`` loads here."""

    topic: str
    field: str
    key_field: str


Routing = OneKey | EachKey | ListedKeys | None


# --------------------------------------------------------------------------- the route


class Route(NamedTuple):
    """Everything the server needs about one API (see the module docstring).

    - ``handler``: answers the request (``server.context.Handler``).
    - ``routing``: which broker's coordinator may answer it (None: any broker).
    - ``may_wait``: its handler may wait long (Produce acks=-1, Fetch, JoinGroup,
      SyncGroup): the connection writes the answers it holds before calling it.
    - ``parks``: its answer may be parked for long (JoinGroup, SyncGroup, Fetch's long
      poll): the connection watches for the client leaving meanwhile, so it closes at
      once instead of holding a descriptor until the answer comes.
    - ``read_only``: a coordinator API that changes nothing, so its answer may show state
      an append still in flight loses; ``core_handler`` is the group core's handler it
      runs, which the runtime runs again when that append fails. (The broker APIs do not
      run in a coordinator: none sets it.)
    - ``pipelined``: its handler's ``submit`` may take it while earlier replies still wait
      for their appends.
    - ``consumer_protocol``: advertised only when ``group.coordinator.rebalance.protocols``
      includes ``consumer`` (its module's name starts with ``consumer_group_``, so the
      early listener reads this off the file names).
    - ``acl``: what Kafka's ``KafkaApis`` authorizes; every entry must pass (enforced by
      ``coordinator.server.authorization`` when an authorizer is configured).
    - ``answer_filter``: with an authorizer, the answer is filtered instead of the request
      checked up front (``coordinator.server.acl_answers``: Metadata, the group listings).
    """

    api_key: ApiKey
    handler: Handler
    acl: tuple[Acl | AnyOf, ...]
    routing: Routing = None
    may_wait: bool = False
    parks: bool = False
    read_only: bool = False
    core_handler: Callable[..., Any] | None = None
    pipelined: bool = False
    consumer_protocol: bool = False
    answer_filter: Callable[..., Any] | None = None
