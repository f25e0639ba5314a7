"""``advance()`` moves coordinator time only (issue 32 item 12, found while looking for the
fixture's stalls): the test double jumps the server's Trio clock, and the deadlines that
protect the server from its peers ran on that clock too -- ``advance(601)`` closed every
client connection at the next idle sweep (``connections.max.idle.ms``, 10 minutes), and
``advance(61)`` closed a connection whose request was arriving (the 60 s frame deadline)
or whose answer was being written (``socket.send.timeout.ms``), though no client was idle
or slow. The jump now moves those deadlines with it; a client's
connection sees only real time, as a client's own timers do."""

from __future__ import annotations

import socket
import time
import warnings
from typing import Any

import pytest

from coordinator.testing import KcoordServer
from wire import decode_response, encode_request

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

API_VERSIONS, PRODUCE, FETCH = 18, 0, 1


def _frame(client_id: str, correlation: int) -> bytes:
    return encode_request(API_VERSIONS, 3, correlation, client_id,
                          {"client_software_name": "t", "client_software_version": "1"})


def _answered(sock: socket.socket, correlation: int) -> bool:
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(65536)
        if not chunk:
            return False
        data += chunk
    return decode_response(API_VERSIONS, 3, data[4:])[0] == correlation


def _closed_by_server(server: KcoordServer, client_id: str) -> bool:
    time.sleep(2.5)  # the idle sweep runs every second
    return any(t["closed_at"] is not None for t in server.connection_tallies(client_id))


def test_advance_past_the_idle_limit_keeps_client_connections(kcoord: KcoordServer) -> None:
    with socket.create_connection(("127.0.0.1", kcoord.port), timeout=10) as sock:
        sock.sendall(_frame("idle", 1))
        assert _answered(sock, 1)
        kcoord.advance(601)  # connections.max.idle.ms is 600,000
        assert not _closed_by_server(kcoord, "idle")
        sock.sendall(_frame("idle", 2))
        assert _answered(sock, 2)


def test_advance_past_the_frame_deadline_keeps_a_request_arriving(
        kcoord: KcoordServer) -> None:
    with socket.create_connection(("127.0.0.1", kcoord.port), timeout=10) as sock:
        sock.sendall(_frame("arriving", 1))
        assert _answered(sock, 1)
        frame = _frame("arriving", 2)
        sock.sendall(frame[:6])
        time.sleep(0.2)
        kcoord.advance(61)  # a request must arrive whole within 60 s of its first byte
        assert not _closed_by_server(kcoord, "arriving")
        sock.sendall(frame[6:])
        assert _answered(sock, 2)


def _call(sock: socket.socket, api_key: int, version: int, body: dict[str, Any]) -> Any:
    sock.sendall(encode_request(api_key, version, 1, "writer", body))
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(1 << 20)
        assert chunk, "closed by the server"
        data += chunk
    return decode_response(api_key, version, data[4:])[1]


def _fetch_body() -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 24,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "big", "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                "last_fetched_epoch": -1, "log_start_offset": -1,
                "partition_max_bytes": 1 << 24}]}],
            "forgotten_topics_data": [], "rack_id": ""}


@pytest.mark.kcoord_config({"socket.send.buffer.bytes": "4096"})
def test_advance_past_the_send_timeout_keeps_an_answer_being_written(
        kcoord: KcoordServer) -> None:
    kcoord.create_topic("big", 1)
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 21)
    builder.append(0, timestamp=1_000, key=None, value=b"v" * 1_000_000, headers=[])
    with socket.create_connection(("127.0.0.1", kcoord.port), timeout=10) as producer:
        answer = _call(producer, PRODUCE, 9, {
            "transactional_id": None, "acks": 1, "timeout_ms": 5_000,
            "topic_data": [{"name": "big", "partition_data": [
                {"index": 0, "records": bytes(builder.build())}]}]})
        assert answer.responses[0].partition_responses[0].error_code == 0
    with socket.socket() as reader:
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.settimeout(10)
        reader.connect(("127.0.0.1", kcoord.port))
        reader.sendall(encode_request(FETCH, 12, 7, "slow-reader", _fetch_body()))
        time.sleep(0.5)  # the answer fills both socket buffers and waits for room
        kcoord.advance(61)  # socket.send.timeout.ms is 60,000
        assert not _closed_by_server(kcoord, "slow-reader")
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = reader.recv(1 << 20)
            assert chunk, "closed by the server"
            data += chunk
        correlation, fetched = decode_response(FETCH, 12, data[4:])
        assert correlation == 7 and len(fetched.responses[0].partitions[0].records) > 1_000_000
