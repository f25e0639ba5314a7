"""The group lifecycle at INFO, as Kafka's coordinator logs it, from the history records the
runtime just appended."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from storage.records import RebalanceEventKey, RebalanceEventValue, Record

__all__ = ["log_group_events"]

# Under the runtime's name: the lines are the runtime's report of what it appended.
log = logging.getLogger("coordinator.server.runtime")

_EVENT_LOG = {
    "rebalance_start": "Preparing to rebalance group %s in generation %d (reason: %s).",
    "member_expired": "Member %s in group %s has been removed (reason: %s).",
    "rebalance_end": "Stabilized group %s generation %d with %d members.",
    "group_deleted": "Group %s deleted.",
}


def log_group_events(records: Iterable[Record]) -> None:
    """The group lifecycle at INFO, as Kafka's coordinator logs it, from the history records
    that just reached the log (rebalance start and end, expired members, deletions). A removed
member's line carries the group's generation then (the record's ``generation``
attribute, not in the text: the removal watch of ``coordinator.testing`` reads it)."""
    for record in records:
        key, value = record.key, record.value
        if not isinstance(key, RebalanceEventKey) or not isinstance(value, RebalanceEventValue):
            continue
        event = value.event
        if event == "rebalance_start":
            log.info(_EVENT_LOG[event], key.group, value.generation, value.reason or "unknown")
        elif event in ("member_expired", "member_leave"):
            log.info(_EVENT_LOG["member_expired"], value.member_id, key.group,
                     value.reason or "left the group", extra={"generation": value.generation})
        elif event == "rebalance_end":
            log.info(_EVENT_LOG[event], key.group, value.generation, len(value.members))
        elif event == "group_deleted":
            log.info(_EVENT_LOG[event], key.group)
