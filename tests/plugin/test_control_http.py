"""The HTTP control API over real HTTP (urllib, from a worker thread) against a real server:
a member's session expires when ``POST /time/advance`` moves coordinator time, faults are
armed, listed and removed, ``POST /reset`` deletes the emptied group."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import trio
import trio.testing

import wire
from coordinator.server.app import RunningServer, serve
from coordinator.server.faults import FaultInjector
from coordinator.server.options import build_options
from coordinator.testing.control_http import serve_control

JOIN_GROUP, SYNC_GROUP, HEARTBEAT = 11, 14, 12


def http(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}  # every state-changing request needs it
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


async def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return await trio.to_thread.run_sync(http, port, method, path, body)


class RawClient:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.reader = wire.FrameReader()
        self.correlation = 0

    async def request(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.correlation += 1
        await self.stream.send_all(
            wire.encode_request(api_key, version, self.correlation, "ctl-test", body)
        )
        while (payload := self.reader.next_frame()) is wire.NEED_DATA:
            data = await self.stream.receive_some(65536)
            assert data, "server closed the connection"
            self.reader.receive_data(data)
        assert isinstance(payload, bytes)
        correlation, response = wire.decode_response(api_key, version, payload)
        assert correlation == self.correlation
        return response


async def start(nursery: trio.Nursery, faults: FaultInjector) -> tuple[RunningServer, int]:
    options = build_options(
        {"group.initial.rebalance.delay.ms": "0"}, port=0, data_dir=None, faults=faults
    )
    running: RunningServer = await nursery.start(serve, options)
    control_port: int = await nursery.start(serve_control, running, faults, 0)
    return running, control_port


async def test_time_advance_faults_and_reset_over_http(
    mock_clock: trio.testing.MockClock,
) -> None:
    mock_clock.rate = 1.0  # real time passes; /time/advance jumps on top of it
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
            joined = await client.request(
                JOIN_GROUP,
                3,
                {
                    "group_id": "g",
                    "session_timeout_ms": 6000,
                    "rebalance_timeout_ms": 6000,
                    "member_id": "",
                    "protocol_type": "consumer",
                    "protocols": [{"name": "range", "metadata": b"\x00\x00"}],
                },
            )
            assert joined.error_code == 0
            synced = await client.request(
                SYNC_GROUP,
                3,
                {
                    "group_id": "g",
                    "generation_id": joined.generation_id,
                    "member_id": joined.member_id,
                    "assignments": [{"member_id": joined.member_id, "assignment": b""}],
                },
            )
            assert synced.error_code == 0

            status, group = await call(port, "GET", "/groups/g")
            assert status == 200 and group["state"] == "Stable" and len(group["members"]) == 1
            status, groups = await call(port, "GET", "/groups")
            assert status == 200 and [g["group_id"] for g in groups] == ["g"]

            status, fault = await call(
                port, "POST", "/faults", {"api_key": HEARTBEAT, "error_code": 27, "count": 2}
            )
            assert status == 201 and fault["api_key"] == HEARTBEAT
            status, listed = await call(port, "GET", "/faults")
            assert [f["id"] for f in listed] == [fault["id"]]
            beat = await client.request(
                HEARTBEAT,
                3,
                {
                    "group_id": "g",
                    "generation_id": joined.generation_id,
                    "member_id": joined.member_id,
                },
            )
            assert beat.error_code == 27  # injected, not the coordinator's answer
            status, _ = await call(port, "DELETE", f"/faults/{fault['id']}")
            assert status == 200 and not faults.active()
            beat = await client.request(
                HEARTBEAT,
                3,
                {
                    "group_id": "g",
                    "generation_id": joined.generation_id,
                    "member_id": joined.member_id,
                },
            )
            assert beat.error_code == 0

            status, moved = await call(port, "POST", "/time/advance", {"seconds": 7})
            assert status == 200 and moved["advanced_seconds"] == 7
            status, group = await call(port, "GET", "/groups/g")
            assert group["state"] == "Empty" and group["members"] == []  # session expired

            status, reset = await call(port, "POST", "/reset")
            assert status == 200 and reset["deleted_groups"] == ["g"]
            status, missing = await call(port, "GET", "/groups/g")
            assert status == 404 and "no group" in missing["error"]

            status, bad = await call(port, "POST", "/time/advance", {"seconds": -1})
            assert status == 400
            status, bad = await call(port, "POST", "/faults", {"api_key": 8, "colour": "red"})
            assert status == 400 and "colour" in bad["error"]
            status, _ = await call(port, "GET", "/nowhere")
            assert status == 404
            await client.stream.aclose()
            nursery.cancel_scope.cancel()


CONSUMER_GROUP_HEARTBEAT = 68


async def test_consumer_groups_show_over_http_and_expire_with_coordinator_time(
    mock_clock: trio.testing.MockClock,
) -> None:
    """A KIP-848 member joins over the wire; ``GET /groups/{id}`` shows the consumer group
    with its epochs and the member's assignment; ``POST /time/advance`` past the session
    timeout (45 s by default) fences the member."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            running.server.topics.ensure_topic("t", 3)
            client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
            joined = await client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
                "group_id": "cg", "member_id": "member-1", "member_epoch": 0,
                "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
                "topic_partitions": [],
            })
            assert (joined.error_code, joined.member_epoch) == (0, 1)
            assert [sorted(tp.partitions) for tp in joined.assignment.topic_partitions] == [
                [0, 1, 2]]
            status, group = await call(port, "GET", "/groups/cg")
            assert status == 200
            assert (group["type"], group["state"], group["group_epoch"]) == (
                "consumer", "Stable", 1)
            (member,) = group["members"]
            assert member["member_epoch"] == 1
            assert member["assignment"] == [["t", 0], ["t", 1], ["t", 2]]
            status, groups = await call(port, "GET", "/groups")
            assert [(g["group_id"], g["type"]) for g in groups] == [("cg", "consumer")]
            status, _ = await call(port, "POST", "/time/advance", {"seconds": 46})
            status, group = await call(port, "GET", "/groups/cg")
            assert (group["state"], group["members"], group["group_epoch"]) == ("Empty", [], 2)
            await client.stream.aclose()
            nursery.cancel_scope.cancel()


async def test_share_groups_show_over_http_and_expire_with_coordinator_time(
    mock_clock: trio.testing.MockClock,
) -> None:
    """A share group member (KIP-932) joins over the wire; ``GET /groups/{id}`` shows the
    share group with its epochs and the member's assignment; ``POST /time/advance`` past the
    share session timeout (45 s by default) fences the member."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            running.server.topics.ensure_topic("t", 2)
            client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
            joined = await client.request(wire.ApiKey.SHARE_GROUP_HEARTBEAT, 1, {
                "group_id": "sg", "member_id": "member-1", "member_epoch": 0,
                "subscribed_topic_names": ["t"],
            })
            assert (joined.error_code, joined.member_epoch) == (0, 1)
            status, group = await call(port, "GET", "/groups/sg")
            assert status == 200
            assert (group["type"], group["state"], group["group_epoch"]) == ("share", "Stable", 1)
            (member,) = group["members"]
            assert (member["member_epoch"], member["assignment"]) == (1, [["t", 0], ["t", 1]])
            status, groups = await call(port, "GET", "/groups")
            assert [(g["group_id"], g["type"]) for g in groups] == [("sg", "share")]
            status, _ = await call(port, "POST", "/time/advance", {"seconds": 46})
            status, group = await call(port, "GET", "/groups/sg")
            assert (group["state"], group["members"], group["group_epoch"]) == ("Empty", [], 2)
            await client.stream.aclose()
            nursery.cancel_scope.cancel()


async def test_bad_control_requests_get_a_4xx_and_the_server_lives(
    mock_clock: trio.testing.MockClock,
) -> None:
    """Issue 15 items 9 and 11: an infinite or huge time jump, an unknown API, an unknown
    error code and a zero count are refused with 400; an API name works."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            _, port = await start(nursery, faults)
            for body in ({"seconds": 1e308}, {"seconds": float("1e400")}, {"seconds": True}):
                status, answer = await call(port, "POST", "/time/advance", body)
                assert status == 400, (body, answer)
            for body in ({"api_key": 999, "error_code": 27},
                         {"api_key": "NoSuchApi", "error_code": 27},
                         {"api_key": 8, "error_code": 99999},
                         {"api_key": 8, "error_code": 27, "count": 0}):
                status, answer = await call(port, "POST", "/faults", body)
                assert status == 400, (body, answer)
            status, fault = await call(port, "POST", "/faults",
                                       {"api_key": "OffsetCommit", "error_code": 27})
            assert status == 201 and fault["api_key"] == 8
            status, _ = await call(port, "POST", "/time/advance", {"seconds": 1})
            assert status == 200  # still serving
            nursery.cancel_scope.cancel()


async def test_transactions_show_over_http(mock_clock: trio.testing.MockClock) -> None:
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            running.server.topics.ensure_topic("t", 2)
            client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
            init = await client.request(22, 4, {
                "transactional_id": "http-tx", "transaction_timeout_ms": 30_000,
                "producer_id": -1, "producer_epoch": -1})
            assert init.error_code == 0
            added = await client.request(24, 3, {
                "v3_and_below_transactional_id": "http-tx",
                "v3_and_below_producer_id": init.producer_id,
                "v3_and_below_producer_epoch": init.producer_epoch,
                "v3_and_below_topics": [{"name": "t", "partitions": [1]}]})
            assert added.results_by_topic_v3_and_below[0].results_by_partition[0] \
                .partition_error_code == 0
            status, body = await call(port, "GET", "/transactions")
            assert status == 200
            assert body == [{
                "transactional_id": "http-tx", "state": "Ongoing",
                "producer_id": init.producer_id, "producer_epoch": init.producer_epoch,
                "timeout_ms": 30_000, "partitions": [["t", 1]], "staged_offsets": {}}]
            await client.stream.aclose()
            nursery.cancel_scope.cancel()


async def test_group_offsets_show_over_http(mock_clock: trio.testing.MockClock) -> None:
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            running.server.topics.ensure_topic("t", 1)
            client = RawClient(await trio.open_tcp_stream("127.0.0.1", running.port))
            committed = await client.request(8, 8, {
                "group_id": "http-lag", "generation_id_or_member_epoch": -1, "member_id": "",
                "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                    {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                     "committed_metadata": ""}]}]})
            assert committed.topics[0].partitions[0].error_code == 0
            status, body = await call(port, "GET", "/groups/http-lag/offsets")
            assert (status, body) == (200, [{"topic": "t", "partition": 0, "committed": 0,
                                             "log_end_offset": 0, "lag": 0}])
            status, whole = await call(port, "GET", "/groups/http-lag")
            assert status == 200 and whole["offsets"] == body
            status, _ = await call(port, "GET", "/groups/nobody/offsets")
            assert status == 404
            await client.stream.aclose()
            nursery.cancel_scope.cancel()


def forged(port: int, host: str, content_type: str | None) -> int:
    """A POST /reset as a web page could send it; the status."""
    data = b"{}"
    headers = {"Host": host}
    if content_type is not None:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(f"http://127.0.0.1:{port}/reset", data=data, method="POST",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


async def test_requests_a_web_page_could_forge_are_refused(
    mock_clock: trio.testing.MockClock,
) -> None:
    """Issue 15 item 10: a foreign Host (DNS rebinding) is 403, a body that is not JSON by
    its Content-Type (a cross-site form post) is 415; loopback names and JSON pass."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            running.server.topics.ensure_topic("kept", 1)
            cases = [
                ("evil.example:80", "application/json", 403),
                ("127.0.0.1.evil.example", "application/json", 403),
                (f"localhost:{port}", "application/x-www-form-urlencoded", 415),
                (f"localhost:{port}", None, 415),
                (f"127.0.0.1:{port}", "application/json; charset=utf-8", 200),
                (f"[::1]:{port}", "application/json", 200),
                ("localhost", "application/json", 200),
            ]
            for host, content_type, expected in cases:
                status = await trio.to_thread.run_sync(forged, port, host, content_type)
                assert status == expected, (host, content_type, status)
            nursery.cancel_scope.cancel()


async def test_broker_controls_over_http(mock_clock: trio.testing.MockClock) -> None:
    """Issue 13's controls: GET /brokers, stop/start, moving a group's coordinator; invalid
    ids and bodies are 4xx, stopping the last live broker is 409."""
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            options = build_options({"group.initial.rebalance.delay.ms": "0"}, port=0,
                                    data_dir=None, faults=faults, brokers=2)
            running: RunningServer = await nursery.start(serve, options)
            port: int = await nursery.start(serve_control, running, faults, 0)
            status, brokers = await call(port, "GET", "/brokers")
            assert status == 200
            assert [(b["node_id"], b["live"]) for b in brokers] == [(0, True), (1, True)]
            assert brokers[1]["port"] == running.brokers.ports[1]

            status, moved = await call(port, "POST", "/groups/g/coordinator", {"node_id": 1})
            assert status == 200 and moved["node_id"] == 1
            assert running.brokers.cluster.coordinator("__consumer_offsets", "g") == 1
            for body in ({"node_id": "one"}, {"node": 1}, [1]):
                status, answer = await call(port, "POST", "/groups/g/coordinator", body)
                assert status == 400, (body, answer)
            status, answer = await call(port, "POST", "/groups/g/coordinator", {"node_id": 7})
            assert status == 404 and "no broker 7" in answer["error"]

            status, stopped = await call(port, "POST", "/brokers/1/stop")
            assert status == 200 and stopped["node_id"] == 1
            assert running.brokers.cluster.coordinator("__consumer_offsets", "g") == 0
            status, answer = await call(port, "POST", "/brokers/0/stop")
            assert status == 409 and "last live broker" in answer["error"]
            status, answer = await call(port, "POST", "/brokers/1/stop")
            assert status == 409 and "already stopped" in answer["error"]
            assert (await call(port, "POST", "/brokers/x/stop"))[0] == 400
            assert (await call(port, "POST", "/brokers/9/start"))[0] == 404
            assert (await call(port, "DELETE", "/brokers"))[0] == 404
            status, started = await call(port, "POST", "/brokers/1/start")
            assert status == 200 and started["port"] == running.brokers.ports[1]
            stream = await trio.open_tcp_stream("127.0.0.1", running.brokers.ports[1])
            await stream.aclose()
            status, elected = await call(port, "POST", "/brokers/preferred-leaders")
            assert status == 200 and elected["changed"] == 0  # no topics

            status, fault = await call(port, "POST", "/faults",
                                       {"api_key": "Heartbeat", "error_code": 27,
                                        "node_id": 1})
            assert status == 201 and fault["node_id"] == 1
            nursery.cancel_scope.cancel()


async def test_broker_controls_on_one_broker_are_409(mock_clock: trio.testing.MockClock) -> None:
    mock_clock.rate = 1.0
    faults = FaultInjector()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running, port = await start(nursery, faults)
            status, brokers = await call(port, "GET", "/brokers")
            assert status == 200 and brokers == [
                {"node_id": 0, "host": "127.0.0.1", "port": running.port, "live": True}]
            status, answer = await call(port, "POST", "/brokers/0/stop")
            assert status == 409 and "--brokers" in answer["error"]
            nursery.cancel_scope.cancel()
