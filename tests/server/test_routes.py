"""The route modules (``coordinator/server/apis/``): each declares every fact the server
needs about its API, the server's tables are read off them and equal what the hand-written
tables held before, and adding an API is adding one file."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from construct import Container

from coordinator.server.apis import (
    CONSUMER_PROTOCOL_API_KEYS,
    SERVED_API_KEYS,
    RouteTable,
    load_routes,
    route_module_names,
    served_api_keys,
)
from coordinator.server.route import (
    ALLOWED,
    Acl,
    AclOperation,
    AnyOf,
    EachKey,
    Entries,
    ListedKeys,
    OneKey,
    ResourceType,
    Route,
)
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire import ApiKey

ROUTES = load_routes()
_FLAGS = ("may_wait", "parks", "read_only", "pipelined", "consumer_protocol")


# --------------------------------------------------------------------------- every fact


@pytest.mark.parametrize("name", route_module_names())
def test_each_route_module_declares_every_fact(name: str) -> None:
    module = importlib.import_module(f"coordinator.server.apis.{name}")
    route = module.ROUTE
    assert isinstance(route, Route)
    assert route.api_key == ApiKey[name.upper()]
    assert callable(route.handler)
    assert isinstance(route.acl, tuple)
    for check in route.acl:
        acls = check.acls if isinstance(check, AnyOf) else (check,)
        assert acls and all(isinstance(acl, Acl) for acl in acls), check
        for acl in acls:
            assert isinstance(acl.resource, ResourceType) and isinstance(
                acl.operation, AclOperation)
    assert route.routing is None or isinstance(route.routing, OneKey | EachKey | ListedKeys)
    for flag in _FLAGS:
        assert type(getattr(route, flag)) is bool, flag
    assert route.read_only or route.core_handler is None
    assert (route.core_handler is not None) == (
        route.read_only and route.routing is not None and route.routing.topic == OFFSETS_TOPIC
    ), "a read-only group API names the core handler the runtime runs again"
    assert not route.parks or route.may_wait, "a parked answer is one that may wait"


def test_only_the_pre_authentication_apis_need_no_acl() -> None:
    assert {key for key, route in ROUTES.items() if route.acl == ALLOWED} == {
        ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE}


def test_acls_are_what_kafka_apis_checks() -> None:
    """Spot checks against Kafka's ``KafkaApis`` (4.x)."""
    group, topic, cluster, txn = (ResourceType.GROUP, ResourceType.TOPIC,
                                  ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID)
    read, create, write = AclOperation.READ, AclOperation.CREATE, AclOperation.WRITE
    topics = (Entries("topics"),)
    assert ROUTES[ApiKey.OFFSET_COMMIT].acl == (Acl(group, read),
                                                Acl(topic, read, entries=topics))
    assert ROUTES[ApiKey.CREATE_TOPICS].acl[0] == AnyOf((Acl(cluster, create),
                                                         Acl(topic, create, entries=topics)))
    assert ROUTES[ApiKey.HEARTBEAT].acl == (Acl(group, read),)
    assert ROUTES[ApiKey.END_TXN].acl == (Acl(txn, write),)
    assert ROUTES[ApiKey.DELETE_GROUPS].acl == (
        Acl(group, AclOperation.DELETE, entries=(Entries("groups_names", name=""),)),)
    describe = AclOperation.DESCRIBE
    groups, share_topics = Entries("groups", "group_id"), Entries("topics", "topic_name")
    assert ROUTES[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS].acl == (
        Acl(group, describe, entries=(groups,)),
        Acl(topic, describe, entries=(share_topics._replace(within=groups),)))
    assert ROUTES[ApiKey.ALTER_SHARE_GROUP_OFFSETS].acl == (
        Acl(group, read), Acl(topic, read, entries=(share_topics,)))
    assert ROUTES[ApiKey.DELETE_SHARE_GROUP_OFFSETS].acl == (
        Acl(group, AclOperation.DELETE), Acl(topic, read, entries=(share_topics,)))


# --------------------------------------------------------------------------- derived tables
# What the hand-written tables held before the routes (connection.py, pipeline.py,
# routing.py, runtime.py, apis.py, wire/fast_codec.py).

MAY_WAIT = {0, 1, 11, 14, 78, 79}  # Produce (acks=-1), Fetch, JoinGroup, SyncGroup, ShareFetch,
# ShareAcknowledge (answered once their acknowledgements are durable)
PARKS = {1, 11, 14, 78}
PIPELINED = {ApiKey.OFFSET_COMMIT, ApiKey.HEARTBEAT, ApiKey.CONSUMER_GROUP_HEARTBEAT,
             ApiKey.SHARE_GROUP_HEARTBEAT}
GROUP_KEYED = {ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP,
               ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_DELETE, ApiKey.CONSUMER_GROUP_HEARTBEAT,
               ApiKey.TXN_OFFSET_COMMIT, ApiKey.SHARE_GROUP_HEARTBEAT,
               ApiKey.ALTER_SHARE_GROUP_OFFSETS, ApiKey.DELETE_SHARE_GROUP_OFFSETS}
TXN_KEYED = {ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN, ApiKey.ADD_PARTITIONS_TO_TXN,
             ApiKey.INIT_PRODUCER_ID}
MULTI = {
    ApiKey.DESCRIBE_GROUPS: (OFFSETS_TOPIC, "groups", "groups", "group_id"),
    ApiKey.DELETE_GROUPS: (OFFSETS_TOPIC, "groups_names", "results", "group_id"),
    ApiKey.CONSUMER_GROUP_DESCRIBE: (OFFSETS_TOPIC, "group_ids", "groups", "group_id"),
    ApiKey.SHARE_GROUP_DESCRIBE: (OFFSETS_TOPIC, "group_ids", "groups", "group_id"),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: (OFFSETS_TOPIC, "groups", "groups", "group_id"),
    ApiKey.OFFSET_FETCH: (OFFSETS_TOPIC, "groups", "groups", "group_id"),
    ApiKey.DESCRIBE_TRANSACTIONS: (TRANSACTION_STATE_TOPIC, "transactional_ids",
                                   "transaction_states", "transactional_id"),
}
LISTS = {
    ApiKey.LIST_GROUPS: (OFFSETS_TOPIC, "groups", "group_id"),
    ApiKey.LIST_TRANSACTIONS: (TRANSACTION_STATE_TOPIC, "transaction_states",
                               "transactional_id"),
}
CONSUMER_PROTOCOL = {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE}
SERVED = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 24, 25, 26,
          28, 32, 33, 36, 37, 42, 44, 47, 60, 65, 66, 68, 69, 74, 76, 77, 78, 79}
# The cluster APIs (issue 30 item 3): AlterReplicaLogDirs, DescribeLogDirs, ElectLeaders,
# Alter- and ListPartitionReassignments, DescribeQuorum, DescribeProducers,
# DescribeTopicPartitions.
SERVED |= {34, 35, 43, 45, 46, 55, 61, 75}
# The security APIs (issue 29): Describe-, Create- and DeleteAcls, Describe- and
# AlterUserScramCredentials.
SERVED |= {29, 30, 31, 50, 51}
# OffsetForLeaderEpoch (KIP-320): consumers validate their position after a leader change.
SERVED |= {23}
# The client quota APIs (issue 30 item 6): DescribeClientQuotas, AlterClientQuotas.
SERVED |= {48, 49}
# The share-group offsets APIs (issue 31): Describe-, Alter- and DeleteShareGroupOffsets.
SERVED |= {90, 91, 92}


def test_connection_traits_equal_the_old_tables() -> None:
    traits = ROUTES.traits
    assert traits.may_wait == MAY_WAIT
    assert traits.parks == PARKS
    assert traits.pipelined == PIPELINED


def test_served_and_consumer_protocol_keys_equal_the_old_tables() -> None:
    assert set(ROUTES) == SERVED_API_KEYS == SERVED
    assert CONSUMER_PROTOCOL_API_KEYS == ROUTES.keys_where("consumer_protocol") \
        == CONSUMER_PROTOCOL
    assert served_api_keys(False) == SERVED - CONSUMER_PROTOCOL
    assert served_api_keys(True) == SERVED


def test_the_read_only_core_handlers_are_the_group_reads() -> None:
    from coordinator.core import handle_describe_groups, handle_list_groups, handle_offset_fetch
    from coordinator.core.consumer.describe import handle_consumer_group_describe
    from coordinator.core.share_group.describe import handle_share_group_describe

    assert ROUTES.read_only_core_handlers == {
        handle_consumer_group_describe, handle_describe_groups, handle_list_groups,
        handle_offset_fetch, handle_share_group_describe}
    assert ROUTES.keys_where("read_only") == {
        ApiKey.DESCRIBE_GROUPS, ApiKey.LIST_GROUPS, ApiKey.OFFSET_FETCH,
        ApiKey.CONSUMER_GROUP_DESCRIBE, ApiKey.DESCRIBE_TRANSACTIONS, ApiKey.LIST_TRANSACTIONS,
        ApiKey.SHARE_GROUP_DESCRIBE}


def test_every_hand_coded_api_is_routed() -> None:
    # wire.fast_codec's table is the one list of hand codecs (wire cannot read the routes).
    from wire import fast_codec

    hot = {ApiKey.OFFSET_COMMIT, ApiKey.HEARTBEAT, ApiKey.CONSUMER_GROUP_HEARTBEAT}
    assert hot == fast_codec.HAND_CODED_API_KEYS
    assert hot <= ROUTES.keys()


def _routing(kind: type) -> dict[int, Any]:
    return {key: route.routing for key, route in ROUTES.items()
            if isinstance(route.routing, kind)}


def test_routing_equals_the_old_tables() -> None:
    one = _routing(OneKey)
    assert one.keys() == GROUP_KEYED | TXN_KEYED
    assert {key for key, r in one.items() if r.topic == OFFSETS_TOPIC} == GROUP_KEYED
    assert {key for key, r in one.items() if r.answers_while_loading} == {ApiKey.HEARTBEAT}
    each = _routing(EachKey)
    assert {key: tuple(r[:4]) for key, r in each.items()} == MULTI
    assert {key: tuple(r) for key, r in _routing(ListedKeys).items()} == LISTS
    with_topics = {ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS}
    assert all(each[key].error_entry == {"topics": []} for key in with_topics)
    assert all(not r.error_entry for key, r in each.items() if key not in with_topics)


@pytest.mark.parametrize(("api_key", "version", "body", "key"), [
    (ApiKey.HEARTBEAT, 4, {"group_id": "g"}, "g"),
    (ApiKey.TXN_OFFSET_COMMIT, 3, {"group_id": "g", "transactional_id": "t"}, "g"),
    (ApiKey.END_TXN, 4, {"transactional_id": "t"}, "t"),
    (ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": "t"}, "t"),
    (ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": None}, None),
    (ApiKey.ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": "t"}, "t"),
    (ApiKey.ADD_PARTITIONS_TO_TXN, 4, {"v3_and_below_transactional_id": ""}, None),
])
def test_the_one_key_each_request_is_routed_by(
    api_key: int, version: int, body: dict[str, Any], key: str | None
) -> None:
    routing = ROUTES[api_key].routing
    assert isinstance(routing, OneKey)
    assert routing.key(version, Container(body)) == key


def test_offset_fetch_carries_one_group_before_v8() -> None:
    routing = ROUTES[ApiKey.OFFSET_FETCH].routing
    assert isinstance(routing, EachKey) and routing.from_version == 8
    assert routing.before is not None
    assert routing.before.key(7, Container(group_id="g")) == "g"


# --------------------------------------------------------------------------- one file


def test_the_registry_reads_the_keys_off_the_file_names() -> None:
    names = route_module_names()
    assert len(names) == len(SERVED_API_KEYS)
    assert {ApiKey[name.upper()] for name in names} == SERVED_API_KEYS


def _package(tmp_path: Path, name: str, files: dict[str, str]) -> str:
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    for file, text in files.items():
        (root / file).write_text(text, encoding="utf-8")
    return name


_HEARTBEAT_ROUTE = "from coordinator.server.apis.heartbeat import ROUTE\n"


@pytest.fixture
def on_path(tmp_path: Path) -> Any:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("extra_routes")]:
        del sys.modules[name]


def test_adding_an_api_is_adding_one_file(on_path: Path) -> None:
    package = _package(on_path, "extra_routes", {"heartbeat.py": _HEARTBEAT_ROUTE})
    table = load_routes(package)
    assert isinstance(table, RouteTable)
    assert set(table) == {ApiKey.HEARTBEAT}
    assert table.traits.pipelined == {ApiKey.HEARTBEAT}
    assert table.traits.may_wait == set()


@pytest.mark.parametrize(("file", "text", "error"), [
    ("heartbeats.py", _HEARTBEAT_ROUTE, "names no Kafka API"),
    ("leave_group.py", _HEARTBEAT_ROUTE, "routes HEARTBEAT, not LEAVE_GROUP"),
    ("consumer_group_heartbeat.py",
     "from coordinator.server.apis.heartbeat import ROUTE as H\n"
     "ROUTE = H._replace(api_key=68)\n", "consumer_protocol=False"),
])
def test_a_misnamed_route_module_is_refused(on_path: Path, file: str, text: str,
                                            error: str) -> None:
    package = _package(on_path, "extra_routes", {file: text})
    with pytest.raises(ValueError, match=error):
        load_routes(package)


# --------------------------------------------------------------------------- the server


@pytest.mark.parametrize("brokers", [1, 2])
async def test_a_loaded_server_reads_its_connection_traits_off_the_routes(brokers: int) -> None:
    import trio

    from coordinator.server.app import RunningServer, serve
    from coordinator.server.options import build_options

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            options = build_options({}, port=0, data_dir=None, brokers=brokers)
            running: RunningServer = await nursery.start(serve, options)
            servers = ([running.server] if running.brokers is None
                       else list(running.brokers.servers.values()))
            assert len(servers) == brokers
            for server in servers:
                assert server.traits.may_wait == MAY_WAIT
                assert server.traits.parks == PARKS
                assert server.traits.pipelined == PIPELINED
                assert server.handlers.keys() == SERVED
            nursery.cancel_scope.cancel()


def test_a_topic_acl_names_its_entries() -> None:
    """A TOPIC ACL without ``entries`` names no resource and so would allow every request:
    only Metadata's (whose answer is filtered up front) and those with a ``when`` case may
    lack them (the hole OffsetForLeaderEpoch's route had for one merge)."""
    from coordinator.server.apis import load_routes
    from coordinator.server.route import AnyOf

    unnamed = []
    for key, route in load_routes().items():
        for item in route.acl:
            for acl in item.acls if isinstance(item, AnyOf) else (item,):
                if acl.resource.name == "TOPIC" and not acl.entries and not acl.when:
                    unnamed.append(key)
    assert unnamed == [3]
