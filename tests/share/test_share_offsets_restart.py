"""AlterShareGroupOffsets and DeleteShareGroupOffsets survive SIGKILL: a real ``kcoord
serve`` (fsync always) is killed after each answered change and restarted on the same data
directory; DescribeShareGroupOffsets and ShareFetch then show the replayed state."""

from __future__ import annotations

import uuid
from typing import Any

from share_offsets_wire import (
    alter_request,
    delete_request,
    describe_request,
    heartbeat_request,
    offsets_of,
)
from share_server import ServerProcess
from share_wire import (
    ACCEPT,
    BlockingClient,
    acquired,
    topic_id_of,
)

GROUP = "restart-offsets"
MEMBER = "0" * 21 + "7"


def _heartbeat(client: BlockingClient, epoch: int) -> None:
    assert client.request(*heartbeat_request(GROUP, MEMBER, epoch)).error_code == 0


def _consume(client: BlockingClient, topic_id: uuid.UUID,
             accept: tuple[int, int] | None) -> list[tuple[int, int, int]]:
    """Join, fetch, accept ``accept``, close the session, leave: the group is Empty."""
    _heartbeat(client, 0)
    got = acquired(client.share_fetch(GROUP, MEMBER, 0, topic_id))
    acks = {0: [(accept[0], accept[1], ACCEPT)]} if accept else {}
    closed = client.share_acknowledge(GROUP, MEMBER, -1, topic_id, acks)
    assert closed.error_code == 0
    _heartbeat(client, -1)
    return got


def _describe(client: BlockingClient, topics: Any) -> dict[Any, Any]:
    return offsets_of(client.request(*describe_request(GROUP, topics)))


def _groups_describe(port: int) -> list[str]:
    """``kcoord groups describe GROUP``'s lines."""
    import contextlib
    import io

    from coordinator.groups_cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["describe", GROUP, "--bootstrap", f"127.0.0.1:{port}"]) == 0
    return out.getvalue().splitlines()


def _restarted(killable_server: ServerProcess, client: BlockingClient) -> BlockingClient:
    client.close()
    killable_server.kill()  # the change was answered: it is on disk
    killable_server.start()
    return BlockingClient(killable_server.port)


def test_altered_and_deleted_share_offsets_survive_sigkill(killable_server: ServerProcess) -> None:
    client = BlockingClient(killable_server.port)
    try:
        topic_id = topic_id_of(client)
        configured = client.request(44, 1, {"resources": [{
            "resource_type": 32, "resource_name": GROUP, "configs": [
                {"name": "share.auto.offset.reset", "config_operation": 0,
                 "value": "earliest"}]}], "validate_only": False})
        assert configured.responses[0].error_code == 0
        produced = client.produce("t", 0, [b"r%d" % i for i in range(8)])
        assert produced.responses[0].partition_responses[0].error_code == 0
        assert _consume(client, topic_id, (0, 1)) == [(0, 7, 1)]
        assert _describe(client, {"t": [0]}) == {("t", 0): (2, 6)}
        altered = client.request(*alter_request(GROUP, {"t": {0: 5}}))
        assert [p.error_code for t in altered.responses for p in t.partitions] == [0]

        client = _restarted(killable_server, client)
        assert _describe(client, None) == {("t", 0): (5, 3)}
        assert _groups_describe(killable_server.port) == [
            f"Share group '{GROUP}' has no active members.", "",
            "GROUP           TOPIC PARTITION START-OFFSET LAG",
            f"{GROUP} t     0         5            3"]
        assert _consume(client, topic_id, (5, 7)) == [(5, 7, 1)]
        assert _describe(client, None) == {("t", 0): (8, 0)}
        deleted = client.request(*delete_request(GROUP, ["t"]))
        assert [(t.topic_name, t.error_code) for t in deleted.responses] == [("t", 0)]

        client = _restarted(killable_server, client)
        assert _describe(client, None) == {}
        assert _describe(client, {"t": [0]}) == {("t", 0): (-1, -1)}
        # Started again by share.auto.offset.reset (earliest): every record comes once more.
        assert _consume(client, topic_id, None) == [(0, 7, 1)]
    finally:
        client.close()
