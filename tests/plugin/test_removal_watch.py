"""The test double's connection tallies and removal watch (issue 32 item 12): the bytes and
requests each connection sent are counted exactly, and a member removed by session timeout
is judged a silent client when its client sent nothing for the session, and a server that
failed to renew when its heartbeats arrived (here, swallowed by an injected fault before
the coordinator saw them) -- the two cases the group soak must tell apart."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from coordinator.testing.diagnosis import connection_line, failure_report
from coordinator.testing.double import KcoordServer
from wire import decode_response, encode_request

JOIN, HEARTBEAT, SYNC = 11, 12, 14
SESSION_MS = 6000


class Client:
    """A blocking raw client that counts the bytes it sends."""

    def __init__(self, server: KcoordServer, client_id: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self.client_id = client_id
        self.correlation = 0
        self.sent = 0
        _OPEN.append(self)

    def call(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.correlation += 1
        frame = encode_request(api_key, version, self.correlation, self.client_id, body)
        self.sock.sendall(frame)
        self.sent += len(frame)
        data = bytearray()
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = self.sock.recv(1 << 16)
            assert chunk, "closed by the server"
            data += chunk
        correlation, response = decode_response(api_key, version, bytes(data[4:]))
        assert correlation == self.correlation
        return response

    def join_alone(self, group: str) -> tuple[str, int]:
        """Join ``group`` as its only member and sync: (member id, generation)."""
        joined = self.call(JOIN, 3, {
            "group_id": group, "session_timeout_ms": SESSION_MS, "rebalance_timeout_ms": 10000,
            "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}]})
        assert joined["error_code"] == 0, joined
        member, generation = joined["member_id"], joined["generation_id"]
        synced = self.call(SYNC, 2, {"group_id": group, "generation_id": generation,
                                     "member_id": member,
                                     "assignments": [{"member_id": member, "assignment": b""}]})
        assert synced["error_code"] == 0, synced
        return member, generation

    def heartbeat(self, group: str, member: str, generation: int) -> int:
        answer = self.call(HEARTBEAT, 2, {"group_id": group, "generation_id": generation,
                                          "member_id": member})
        return int(answer["error_code"])


_OPEN: list[Client] = []


@pytest.fixture
def server() -> Iterator[KcoordServer]:
    with KcoordServer({"group.min.session.timeout.ms": "1000"}) as running:
        yield running
        while _OPEN:
            _OPEN.pop().sock.close()


def test_tallies_count_each_connections_bytes_and_requests(server: KcoordServer) -> None:
    client = Client(server, "counted")
    member, generation = client.join_alone("g-count")
    assert client.heartbeat("g-count", member, generation) == 0
    [tally] = server.connection_tallies("counted")
    assert tally["bytes_in"] == client.sent
    assert tally["requests"] == 3
    assert set(tally["last_at"]) == {JOIN, SYNC, HEARTBEAT}
    client.sock.close()
    # A closed connection's tally is kept (the last 256), closing time stamped.
    def closed() -> bool:
        return all(t["closed_at"] is not None for t in server.connection_tallies("counted"))
    for _ in range(100):
        if closed():
            break
        server.advance(0.01)
    assert closed()


def test_a_member_whose_client_went_silent_is_judged_silent(server: KcoordServer) -> None:
    watch = server.watch_removals()
    try:
        client = Client(server, "quiet")
        member, _ = client.join_alone("g-silent")
        server.advance(SESSION_MS / 1000 + 1)  # nothing sent for a session
        [removal] = watch.taken()
    finally:
        watch.uninstall()
    assert removal.member_id == member and removal.prefix == "quiet"
    assert removal.verdict(SESSION_MS / 1000) == "silent client"
    assert [c["bytes_in"] for c in removal.of({"quiet"})] == [client.sent]


def test_a_member_whose_heartbeats_arrived_is_judged_a_server_fault(
        server: KcoordServer) -> None:
    """Heartbeats reach the server but never the coordinator (an injected fault answers
    them): the member expires although its client spoke -- what the soak fails on."""
    watch = server.watch_removals()
    try:
        client = Client(server, "talker")
        member, generation = client.join_alone("g-fault")
        server.inject(HEARTBEAT, error_code=0, count=None)
        for _ in range(3):  # at 0, 2 and 4 s; the session ends at 6
            assert client.heartbeat("g-fault", member, generation) == 0
            server.advance(2)
        [removal] = watch.taken()
    finally:
        watch.uninstall()
    assert removal.member_id == member
    assert removal.verdict(SESSION_MS / 1000) == "server failed to renew"
    # The same client, heard by the coordinator, is not removed at all.
    healthy = Client(server, "healthy")
    member, generation = healthy.join_alone("g-healthy")
    server.faults.clear()
    watch = server.watch_removals()
    try:
        for _ in range(4):
            assert healthy.heartbeat("g-healthy", member, generation) == 0
            server.advance(2)
        assert watch.taken() == []
    finally:
        watch.uninstall()


def test_tallies_cover_every_broker() -> None:
    with KcoordServer(brokers=3) as cluster:
        port = int(cluster.bootstraps[2].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            frame = encode_request(18, 3, 1, "on-broker-2", {
                "client_software_name": "t", "client_software_version": "1"})
            sock.sendall(frame)
            assert sock.recv(4)  # answered
            [tally] = cluster.connection_tallies("on-broker-2")
        assert tally["bytes_in"] == len(frame) and tally["requests"] == 1


def test_a_sync_group_refused_during_a_rebalance_does_not_count_as_renewal(
        server: KcoordServer) -> None:
    """Kafka 4.x renews a classic member's session on JoinGroup, Heartbeat and OffsetCommit,
    never on SyncGroup: a member whose last request was a SyncGroup answered
    REBALANCE_IN_PROGRESS expires a session later, as in Kafka -- its client's doing, not a
    server that failed to renew (the CI failure of stop 36)."""
    watch = server.watch_removals()
    try:
        first = Client(server, "syncer")
        member, generation = first.join_alone("g-sync")
        joiner = Client(server, "joiner")  # its JoinGroup waits for the rebalance: unread
        joiner.sock.sendall(encode_request(JOIN, 3, 1, "joiner", {
            "group_id": "g-sync", "session_timeout_ms": SESSION_MS,
            "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}]}))
        server.advance(1)
        synced = first.call(SYNC, 2, {"group_id": "g-sync", "generation_id": generation,
                                      "member_id": member, "assignments": []})
        assert synced["error_code"] == 27  # REBALANCE_IN_PROGRESS
        # to just past the session counted from the JoinGroup (the SyncGroup 1 s later is
        # within the session before the removal)
        server.advance(SESSION_MS / 1000 - 1.5)
        server.advance(1)
        removed = [r for r in watch.taken() if r.member_id == member]
    finally:
        watch.uninstall()
    assert len(removed) == 1, watch.taken()
    assert removed[0].verdict(SESSION_MS / 1000) == "client sent other requests"


OFFSET_COMMIT = 8
ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID = 22, 25


def test_heartbeats_answered_illegal_generation_are_a_refused_renewal(
        server: KcoordServer) -> None:
    """A client that heartbeats from a generation the group has left is answered
    ILLEGAL_GENERATION, which renews nothing (in Kafka too): its member expires a session
    later. The tallies record the answers, so the verdict is not the server's fault (it was
    "server failed to renew" while the tallies counted requests only)."""
    watch = server.watch_removals()
    try:
        client = Client(server, "stale")
        member, generation = client.join_alone("g-stale")
        for _ in range(3):  # at 0, 2 and 4 s; the session ends at 6
            assert client.heartbeat("g-stale", member, generation - 1) == ILLEGAL_GENERATION
            server.advance(2)
        [removal] = watch.taken()
    finally:
        watch.uninstall()
    assert removal.member_id == member and removal.generation == generation
    [answer] = removal.answers()
    assert (answer["api_key"], answer["generation"], answer["error_code"]) == (
        HEARTBEAT, generation - 1, ILLEGAL_GENERATION)
    # The JoinGroup's answer (NONE, at 0 s) is the member's last renewal: a session ago.
    assert (answer["renewed_generation"], answer["renewed_at"]) == (
        generation, pytest.approx(removal.at - 6, abs=0.1))
    assert removal.verdict(SESSION_MS / 1000) == "renewal refused"
    [tally] = removal.of({"stale"})  # the failure report's line shows the answers
    assert (f"{member} HEARTBEAT generation {generation - 1} answered 22 "
            f"{removal.at - answer['at']:.1f} s ago (renewed generation {generation} 6.0 s ago)"
            ) in connection_line(tally, removal.at)


def test_heartbeats_of_an_unknown_member_are_a_refused_renewal(server: KcoordServer) -> None:
    """UNKNOWN_MEMBER_ID answers (a member id the group does not have) renew nothing: the
    real member, whose client sent only those, expires and it is the client's doing."""
    watch = server.watch_removals()
    try:
        client = Client(server, "lost")
        member, generation = client.join_alone("g-lost")
        for _ in range(3):
            assert client.heartbeat("g-lost", member + "x", generation) == UNKNOWN_MEMBER_ID
            server.advance(2)
        [removal] = watch.taken()
    finally:
        watch.uninstall()
    assert removal.member_id == member
    [tally] = removal.of({"lost"})
    assert tally["answers"][member + "x"]["error_code"] == UNKNOWN_MEMBER_ID
    assert removal.verdict(SESSION_MS / 1000) == "renewal refused"


def _commit(client: Client, group: str, member: str, generation: int) -> bytes:
    client.correlation += 1
    return encode_request(OFFSET_COMMIT, 7, client.correlation, client.client_id, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
        "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{
            "partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
            "committed_metadata": None}]}]})


def _read_answers(client: Client, keys: list[int]) -> list[tuple[int, Any]]:
    """The answers to requests of ``keys`` sent pipelined, in order (correlation, body)."""
    data = bytearray()
    answers: list[tuple[int, Any]] = []
    while len(answers) < len(keys):
        chunk = client.sock.recv(1 << 16)
        assert chunk, "closed by the server"
        data += chunk
        while len(data) >= 4 and len(data) >= 4 + int.from_bytes(data[:4], "big"):
            size = int.from_bytes(data[:4], "big")
            key = keys[len(answers)]
            answers.append(decode_response(key, 2 if key == HEARTBEAT else 7,
                                           bytes(data[4:4 + size])))
            del data[:4 + size]
    return answers


@pytest.mark.parametrize("fsync", ["never", "always"], ids=["inline", "pending"])
def test_every_reply_path_records_the_answers_of_renewing_requests(
        tmp_path: Any, fsync: str) -> None:
    """Pipelined OffsetCommits and Heartbeats, answered inline (the runtime's fast lane,
    ``fsync never``) or through pending replies the connection's pipeline writer collects
    (``fsync always``: the first commit waits for its fsync and every request behind it is
    queued), and a JoinGroup awaited by the connection's task: each answer is recorded
    under its member id, in request order."""
    with KcoordServer({"group.min.session.timeout.ms": "1000"}, data_dir=str(tmp_path),
                      topics={"t": 1}, fsync=fsync) as running:
        client = Client(running, "piped")
        try:
            member, generation = client.join_alone("g-piped")
            frames = _commit(client, "g-piped", member, generation)  # NONE (renews)
            for version in (generation, generation + 1):  # NONE, ILLEGAL_GENERATION
                client.correlation += 1
                frames += encode_request(HEARTBEAT, 2, client.correlation, "piped", {
                    "group_id": "g-piped", "generation_id": version, "member_id": member})
            frames += _commit(client, "g-piped", member, generation + 1)  # ILLEGAL
            first = client.correlation - 3
            client.sock.sendall(frames)
            answers = _read_answers(client, [OFFSET_COMMIT, HEARTBEAT, HEARTBEAT,
                                             OFFSET_COMMIT])
            [tally] = running.connection_tallies("piped")
        finally:
            _OPEN.remove(client)
            client.sock.close()
    assert [c for c, _ in answers] == [first, first + 1, first + 2, first + 3]
    assert [a["topics"][0]["partitions"][0]["error_code"] for _, a in answers[::3]] == [
        0, ILLEGAL_GENERATION]
    assert [a["error_code"] for _, a in answers[1:3]] == [0, ILLEGAL_GENERATION]
    last = tally["answers"][member]
    assert (last["api_key"], last["generation"], last["error_code"]) == (
        OFFSET_COMMIT, generation + 1, ILLEGAL_GENERATION)
    assert last["renewed_generation"] == generation  # the first Heartbeat's NONE
    assert last["renewed_at"] is not None and last["renewed_at"] <= last["at"]


def test_a_connection_keeps_the_answers_of_a_bounded_number_of_members() -> None:
    from coordinator.server.tally import MEMBERS_KEPT, ConnectionTally

    tally = ConnectionTally(1, 0.0)
    for n in range(MEMBERS_KEPT + 3):
        tally.answered(HEARTBEAT, {"member_id": f"m{n}", "generation_id": 1},
                       {"error_code": 0}, float(n))
    tally.answered(HEARTBEAT, {"member_id": "m5", "generation_id": 1},
                   {"error_code": ILLEGAL_GENERATION}, 50.0)
    answers = tally.view()["answers"]
    assert len(answers) == MEMBERS_KEPT and "m0" not in answers
    assert answers["m5"]["error_code"] == ILLEGAL_GENERATION
    assert (answers["m5"]["renewed_at"], answers["m5"]["at"]) == (5.0, 50.0)


def test_a_renewal_of_another_generation_is_not_the_servers_fault() -> None:
    """Only a renewal of the generation the member was removed in, within the session,
    makes the server's fault."""
    from coordinator.testing.removals import Removal

    answers = {"c-1": {"api_key": HEARTBEAT, "generation": 4, "error_code": 0, "at": 9.0,
                       "renewed_generation": 4, "renewed_at": 9.0}}
    tally = {"client_id": "c", "last_at": {HEARTBEAT: 9.0}, "answers": answers}
    assert Removal("g", "c-1", 10.0, [tally], generation=5).verdict(6) == "renewal refused"
    assert Removal("g", "c-1", 10.0, [tally], generation=4).verdict(6) == (
        "server failed to renew")
    assert Removal("g", "c-1", 16.0, [tally], generation=4).verdict(6) == "silent client"


def test_the_failure_report_names_the_members_a_rebalance_waits_for(
        server: KcoordServer) -> None:
    """A member that heartbeats but never rejoins (a kafka-python consumer left open and
    not polled) holds a newcomer without partitions for the rebalance timeout, in Kafka
    too: the failure report names it and the time left (issue 32 item 12's "no partitions
    for 20 s" when a test shares a group with a consumer an earlier one left open)."""
    client = Client(server, "left-open")
    member, generation = client.join_alone("g-wait")
    newcomer = Client(server, "newcomer")
    newcomer.sock.sendall(encode_request(JOIN, 3, 1, "newcomer", {
        "group_id": "g-wait", "session_timeout_ms": SESSION_MS, "rebalance_timeout_ms": 10000,
        "member_id": "", "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}]}))  # parked: its answer unread
    for _ in range(200):  # (bounded: 2 s of wall time)
        if server.describe_group("g-wait")["state"] == "PreparingRebalance":  # type: ignore[index]
            break
        time.sleep(0.01)
    assert client.heartbeat("g-wait", member, generation) == 27  # REBALANCE_IN_PROGRESS
    server.advance(4)
    assert client.heartbeat("g-wait", member, generation) == 27
    report = failure_report(server)
    assert f"group 'g-wait' waits for the JoinGroup of ['{member}'], at most 6.0 s more" in (
        report), report
    assert f"{member} HEARTBEAT generation {generation} answered 27" in report
