"""How large a classic group's GroupMetadata record would be, so that a group never grows
into one the log cannot store.

Kafka's bound is ``message.max.bytes`` on ``__consumer_offsets``. A group record over it
fails to append, and the leader's SyncGroup is answered UNKNOWN_SERVER_ERROR (-1), again on
every rebalance. kcoord's bound is its log's entry limit (32 MiB,
``storage.segment.MAX_ENTRY_LENGTH``, with room for the key and the framing). It refuses
the JoinGroup that would cross it, and a leader's assignment that would, with
MESSAGE_TOO_LARGE. Clients report that as a clear error instead of retrying -1 forever.

The estimate errs on the large side: a member counts with its largest protocol metadata
until the group has chosen a protocol.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Protocols

__all__ = ["MAX_GROUP_RECORD_BYTES", "group_record_bytes", "joined_record_bytes"]

#: The largest GroupMetadata value kcoord writes: the log's 32 MiB entry limit, less 64 KiB
#: for the key and the entry framing (tests check it against storage's limit).
MAX_GROUP_RECORD_BYTES = 32 * 1024 * 1024 - 64 * 1024

# A member's fixed fields in GroupMetadataValue v3: four string lengths, two timeouts, two
# byte-array lengths; and the group's own fields.
_MEMBER_FIXED = 4 * 2 + 2 * 4 + 2 * 4
_GROUP_FIXED = 64


def _member_bytes(member_id: str, instance_id: str | None, client_id: str, client_host: str,
                  subscription: int, assignment: int) -> int:
    return (_MEMBER_FIXED + len(member_id.encode()) + len((instance_id or "").encode())
            + len(client_id.encode()) + len(client_host.encode()) + subscription + assignment)


def _subscription(protocols: Protocols, chosen: str | None) -> int:
    for name, metadata in protocols:
        if name == chosen:
            return len(metadata)
    return max((len(metadata) for _, metadata in protocols), default=0)


def _own_fields(group: ClassicGroup) -> int:
    """The group's fields of its record, without the members."""
    return (_GROUP_FIXED + len((group.protocol_type or "").encode())
            + len((group.protocol_name or "").encode()) + len((group.leader_id or "").encode()))


def _others(group: ClassicGroup, skip: str, assignment: Mapping[str, bytes] | None) -> int:
    total = 0
    for member_id, member in group.members.items():
        if member_id == skip:
            continue
        assigned = len(assignment.get(member_id, b"")) if assignment is not None else len(
            member.assignment)
        total += _member_bytes(member_id, member.group_instance_id, member.client_id,
                               member.client_host,
                               _subscription(member.protocols, group.protocol_name),
                               assigned)
    return total


def joined_record_bytes(group: ClassicGroup | None, member_id: str, instance_id: str | None,
                        client_id: str, client_host: str, protocols: Protocols) -> int:
    """The group's record once this member has joined with ``protocols``."""
    base = _GROUP_FIXED
    current = None
    if group is not None:
        base = _own_fields(group) + _others(group, member_id, None)
        current = group.members.get(member_id)
    assigned = len(current.assignment) if current is not None else 0
    # The protocol is chosen again in the rebalance this join starts: count the largest.
    return base + _member_bytes(member_id, instance_id, client_id, client_host,
                                _subscription(protocols, None), assigned)


def group_record_bytes(group: ClassicGroup, assignment: Mapping[str, bytes]) -> int:
    """The record a leader's SyncGroup with ``assignment`` would store."""
    return _own_fields(group) + _others(group, "", assignment)
