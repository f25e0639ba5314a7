"""Building a consumer or share group from the records the log holds -- one path for every
time it happens: the load (``GroupCoordinator.on_loaded``), a coordinator move
(``group_reload``), an append that failed (``RebuildOnFailure``), and the views that compare
live state with what a restart would rebuild (``replayed``).

Both kinds are groups the log holds record by record: the store keeps each group's newest
record per key (``HardState.consumer`` / ``HardState.share``) and the group replays them in
log order. A ``GroupKind`` says where the live groups and their records are, which class
replays them and which timer is a member's session; the helpers below do the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from coordinator.core.append_errors import group_metadata_error
from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.group_manager import GroupManager
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.share_group.group import ShareGroup
from coordinator.core.timers import ConsumerSessionTimerKey, ShareSessionTimerKey, TimerKey
from storage.records import Record
from wire.constants import ErrorCode

__all__ = [
    "CONSUMER",
    "KINDS",
    "SHARE",
    "GroupKind",
    "RebuildOnFailure",
    "arm_sessions",
    "rebuild",
    "replayed",
]


class RecordGroup(Protocol):
    """A group built by replaying its records."""

    group_id: str

    @property
    def members(self) -> dict[str, Any]: ...

    def replay(self, record: Record) -> None: ...


G = TypeVar("G", bound=RecordGroup)


class GroupKind(NamedTuple, Generic[G]):
    """One kind of record-built group: the manager's live groups of that kind, the store's
    records of them, the class that replays them, its members' session timer and the
    session timeout every member gets at load."""

    group_type: Callable[[str], G]
    live: Callable[[GroupManager], dict[str, G]]
    stored: Callable[[GroupManager], dict[str, dict[Any, Record]]]
    session_key: Callable[[str, str], TimerKey]
    session_ms: Callable[[GroupManager, str], int]

    def build(self, group_id: str, records: Iterable[Record]) -> G:
        """The group ``records`` describe (in log order)."""
        group = self.group_type(group_id)
        for record in records:
            group.replay(record)
        return group


CONSUMER: GroupKind[ConsumerGroup] = GroupKind(
    ConsumerGroup, lambda manager: manager.consumer_groups, lambda manager: manager.store.consumer,
    ConsumerSessionTimerKey,
    lambda manager, group_id: manager.consumer_session_timeout_ms(group_id),
)
SHARE: GroupKind[ShareGroup] = GroupKind(
    ShareGroup, lambda manager: manager.share_groups, lambda manager: manager.store.share,
    ShareSessionTimerKey, lambda manager, _: manager.config.group_share_session_timeout_ms,
)
#: Every record-built kind, in the order a load builds them.
KINDS: tuple[GroupKind[Any], ...] = (CONSUMER, SHARE)


def replayed(manager: GroupManager, kind: GroupKind[G], group_id: str) -> G | None:
    """The group as a restart would rebuild it from the log (None: the log holds none)."""
    records = kind.stored(manager).get(group_id)
    return None if not records else kind.build(group_id, records.values())


def rebuild(manager: GroupManager, kind: GroupKind[G], group_id: str) -> G | None:
    """Replace the live group by the one its records describe (None: dropped, the log holds
    none); timers are the caller's (``arm_sessions``)."""
    live = kind.live(manager)
    group = replayed(manager, kind, group_id)
    if group is None:
        live.pop(group_id, None)
    else:
        live[group_id] = group
    return group


def arm_sessions(manager: GroupManager, kind: GroupKind[G], group: G, now_ms: int, fx: Effects,
                 session_ms: Callable[[Any], int] | None = None) -> None:
    """Arm every member's session timer: ``session_ms(member)`` from now, by default the
    kind's timeout for the group."""
    default = kind.session_ms(manager, group.group_id)
    for member_id, member in group.members.items():
        timeout = default if session_ms is None else session_ms(member)
        fx.schedule(kind.session_key(group.group_id, member_id), now_ms + timeout)


class RebuildOnFailure:
    """If a group's records do not reach the log, the group goes back to what the log holds
    (``rebuild``, with the timers the kind needs) and the requester, if any, hears the mapped
    error (``error_response``); Kafka reverts its timeline the same way. The consumer and
    share groups' subclasses say how each rebuilds and answers."""

    __slots__ = ("group_id", "manager", "token")

    def __init__(self, manager: GroupManager, group_id: str, token: ReplyToken | None) -> None:
        self.manager = manager
        self.group_id = group_id
        self.token = token

    def appended(self, now_ms: int, fx: Effects) -> None:
        """Nothing to do: the group already holds the records."""

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        self.rebuild(now_ms, fx)
        if self.token is not None:  # else the request's own callback answers
            fx.reply(self.token, self.error_response(group_metadata_error(error)))

    def rebuild(self, now_ms: int, fx: Effects) -> None:
        """Put the group back as the log holds it."""
        raise NotImplementedError

    def error_response(self, code: ErrorCode) -> Any:
        """The answer carrying ``code``."""
        raise NotImplementedError
