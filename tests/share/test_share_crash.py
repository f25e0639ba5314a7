"""Share-partition state survives SIGKILL: a real ``kcoord serve`` (fsync always) is killed
after acknowledgements were answered and restarted on the same data directory. Accepted and
rejected records are never delivered again; records that were only acquired come back
available (acquisitions are not written, as in Kafka); the old session is gone."""

from __future__ import annotations

import uuid
from typing import Any

from share_server import ServerProcess
from share_wire import (
    ACCEPT,
    REJECT,
    BlockingClient,
    acquired,
    topic_id_of,
    values_by_offset,
)

from wire.constants import ErrorCode

GROUP = "crash-queue"
MEMBER = "member-a"


def _fetch(client: BlockingClient, topic_id: uuid.UUID, epoch: int, **kwargs: Any) -> Any:
    answer = client.share_fetch(GROUP, MEMBER, epoch, topic_id, **kwargs)
    return answer


def test_accepted_records_stay_accepted_after_sigkill(killable_server: ServerProcess) -> None:
    client = BlockingClient(killable_server.port)
    topic_id = topic_id_of(client)
    # The share partition starts at the high watermark (latest): open it before producing.
    assert acquired(_fetch(client, topic_id, 0)) == []
    produced = client.produce("t", 0, [b"r%d" % i for i in range(20)])
    assert produced.responses[0].partition_responses[0].error_code == 0
    answer = _fetch(client, topic_id, 1)
    assert acquired(answer) == [(0, 19, 1)]
    acks = client.share_acknowledge(
        GROUP, MEMBER, 2, topic_id, {0: [(0, 9, ACCEPT), (10, 11, REJECT)]})
    assert acks.error_code == 0
    assert [p.error_code for t in acks.responses for p in t.partitions] == [0]
    # Killed while the client is still connected: closing first would race the server's
    # release of 12..19 on disconnect (written, delivery count decreased) against the kill.
    killable_server.kill()  # the acknowledgements were answered: they are on disk
    client.close()
    killable_server.start()
    client = BlockingClient(killable_server.port)
    try:
        assert topic_id_of(client) == topic_id
        stale = _fetch(client, topic_id, 3)
        assert stale.error_code == ErrorCode.SHARE_SESSION_NOT_FOUND  # sessions are soft
        again = _fetch(client, topic_id, 0)
        # 12..19 were acquired only: available again, with the delivery count they had on
        # disk; 0..9 (accepted) and 10, 11 (rejected) never come back.
        assert acquired(again) == [(12, 19, 1)]
        assert values_by_offset(again) == {i: b"r%d" % i for i in range(12, 20)}
        done = _fetch(client, topic_id, 1, acks={0: [(12, 19, ACCEPT)]})
        assert acquired(done) == []
    finally:
        client.close()

    killable_server.kill()
    killable_server.start()
    client = BlockingClient(killable_server.port)
    try:
        assert acquired(_fetch(client, topic_id, 0, max_wait_ms=200)) == []
    finally:
        client.close()
