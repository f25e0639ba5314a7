"""The coordinator harness with share group requests: ShareGroupHeartbeat and
ShareGroupDescribe calls on the fake-clock harness, and a check that the live share groups
are what a replay of the appended records rebuilds."""

from __future__ import annotations

import dataclasses
import sys
import uuid
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1]
for _path in (_TESTS / "coordinator", _TESTS / "coordinator" / "consumer"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from consumer_harness import BAR, FOO, ConsumerHarness  # noqa: E402
from harness import KAFKA_TEST_CONFIG, ctx  # noqa: E402

from coordinator.config import CoordinatorConfig  # noqa: E402
from coordinator.core.share_group.describe import handle_share_group_describe  # noqa: E402
from coordinator.core.share_group.group import ShareGroup  # noqa: E402
from coordinator.core.share_group.heartbeat import handle_share_group_heartbeat  # noqa: E402

__all__ = ["BAR", "FOO", "GROUP", "SHARE_CONFIG", "ShareHarness", "assignment", "snapshot"]

GROUP = "fooup"
SHARE_CONFIG = dataclasses.replace(KAFKA_TEST_CONFIG)


class ShareHarness(ConsumerHarness):
    """ConsumerHarness (topics foo: 6 partitions, bar: 3) + share group requests."""

    def __init__(self, config: CoordinatorConfig = SHARE_CONFIG,
                 **topics: tuple[uuid.UUID, int]) -> None:
        super().__init__(config, **topics)

    def share_heartbeat(
        self, member_id: str, member_epoch: int, *, group_id: str = GROUP,
        rack_id: str | None = None, subscribed_topic_names: list[str] | None = None,
    ) -> Any:
        """One ShareGroupHeartbeat (v1); returns the answer."""
        request = {"group_id": group_id, "member_id": member_id, "member_epoch": member_epoch,
                   "rack_id": rack_id, "subscribed_topic_names": subscribed_topic_names}
        token = self.token()
        self.apply(handle_share_group_heartbeat(
            self.coordinator, ctx(1), request, token, self.now))  # type: ignore[arg-type]
        return self.reply(token)

    def share_join(self, member_id: str, topics: list[str], **kw: Any) -> Any:
        """A joining share heartbeat (epoch 0) subscribing to ``topics``."""
        return self.share_heartbeat(member_id, 0, subscribed_topic_names=topics, **kw)

    def share_describe(self, *group_ids: str) -> Any:
        """ShareGroupDescribe."""
        token = self.token()
        self.apply(handle_share_group_describe(
            self.coordinator, ctx(1),
            {"group_ids": list(group_ids), "include_authorized_operations": False},
            token, self.now))
        return self.reply(token)

    def share_group(self, group_id: str = GROUP) -> ShareGroup:
        group = self.coordinator.share_groups.get(group_id)
        assert group is not None, group_id
        return group

    def assert_share_live_equals_replay(self, group_id: str = GROUP) -> None:
        """The live share group is exactly what its appended records rebuild."""
        live = self.coordinator.share_groups.get(group_id)
        replayed = self.coordinator.replayed_share_group(group_id)
        assert (live is None) == (replayed is None)
        if live is None or replayed is None:
            return
        assert snapshot(live) == snapshot(replayed)


def snapshot(group: ShareGroup) -> Any:
    """A comparable view of a share group."""
    return (
        group.group_epoch, group.assignment_epoch, group.metadata_hash,
        {mid: (m.metadata_value(), m.current_value()) for mid, m in group.members.items()},
        {mid: dict(t) for mid, t in group.target.items()}, dict(group.initialized),
    )


def assignment(answer: Any) -> dict[uuid.UUID, list[int]] | None:
    """The answer's assignment as topic id -> sorted partitions (None if absent)."""
    if answer.get("assignment") is None:
        return None
    return {tp["topic_id"]: sorted(tp["partitions"])
            for tp in answer.assignment["topic_partitions"]}
