"""Exhaustive state x request sweep: every (group state, API) pair gives Kafka's answer.

Each group is brought to a state the way a client would (except Dead, which Kafka's own tests
inject too) with one dynamic member ``A`` that leads; requests come from ``A`` with its current
generation unless the column says otherwise. "parked" means no immediate answer.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from harness import GROUP_ID, PROTOCOL_TYPE, PROTOCOLS, UNKNOWN_MEMBER_ID, Harness, identity

from coordinator.core import ErrorCode
from coordinator.core.classic.state import DEAD

E = ErrorCode
PARKED = "parked"


def _setup(state: str) -> tuple[Harness, str, int]:
    h = Harness()
    if state == "Absent":
        return h, "A-unknown", 1
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    member, generation = join.member_id, join.generation_id
    if state == "CompletingRebalance":
        return h, member, generation
    h.sync_group_leader(GROUP_ID, generation, member, {member: b"a"})
    if state == "Stable":
        return h, member, generation
    if state == "PreparingRebalance":
        h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
        assert h.state() == "PreparingRebalance"
        return h, member, generation
    if state == "Empty":
        h.single_leave_group(GROUP_ID, member)
        assert h.state() == "Empty"
        return h, member, h.group().generation_id
    assert state == "Dead"
    h.group().transition_to(DEAD, h.now)
    return h, member, generation


def _join_known(h: Harness, member: str, generation: int) -> object:
    token = h.send_join_group(GROUP_ID, member, PROTOCOL_TYPE, PROTOCOLS)
    return h.reply(token).error_code if h.answered(token) else PARKED


def _join_unknown(h: Harness, member: str, generation: int) -> object:
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    return h.reply(token).error_code if h.answered(token) else PARKED


def _join_v4(h: Harness, member: str, generation: int) -> object:
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              require_known_member_id=True)
    return h.reply(token).error_code if h.answered(token) else PARKED


def _sync(h: Harness, member: str, generation: int) -> object:
    token = h.send_sync_group(GROUP_ID, generation, member, {member: b"x"})
    return h.reply(token).error_code if h.answered(token) else PARKED


def _heartbeat(h: Harness, member: str, generation: int) -> object:
    return h.heartbeat(GROUP_ID, member, generation)


def _leave(h: Harness, member: str, generation: int) -> object:
    response = h.batch_leave_group(GROUP_ID, [identity(member)])
    return (response.error_code, tuple(m.error_code for m in response.members))


def _commit(h: Harness, member: str, generation: int) -> object:
    return h.commit_offsets(GROUP_ID, member, generation, {("t", 0): 1})[("t", 0)]


def _commit_simple(h: Harness, member: str, generation: int) -> object:
    return h.commit_offsets(GROUP_ID, "", -1, {("t", 0): 1})[("t", 0)]


def _fetch(h: Harness, member: str, generation: int) -> object:
    error, data = h.fetch_offsets(GROUP_ID, [("t", 0)])
    return (error, data[("t", 0)][3])


def _describe(h: Harness, member: str, generation: int) -> object:
    described = h.describe_group(GROUP_ID)
    return (described.error_code, described.group_state)


def _describe_v6(h: Harness, member: str, generation: int) -> object:
    described = h.describe_group(GROUP_ID, api_version=6)
    return (described.error_code, described.group_state)


def _list(h: Harness, member: str, generation: int) -> object:
    error, groups = h.list_groups()
    return (error, tuple(g.group_state for g in groups))


def _delete(h: Harness, member: str, generation: int) -> object:
    return h.delete_groups([GROUP_ID])[GROUP_ID]


def _offset_delete(h: Harness, member: str, generation: int) -> object:
    error, partitions = h.delete_offsets(GROUP_ID, [("t", 0)])
    return (error, partitions.get(("t", 0)))


APIS: dict[str, Callable[[Harness, str, int], object]] = {
    "join_known": _join_known,
    "join_unknown_v3": _join_unknown,
    "join_unknown_v4": _join_v4,
    "sync": _sync,
    "heartbeat": _heartbeat,
    "leave": _leave,
    "commit_member": _commit,
    "commit_simple": _commit_simple,
    "fetch": _fetch,
    "describe": _describe,
    "describe_v6": _describe_v6,
    "list": _list,
    "delete": _delete,
    "offset_delete": _offset_delete,
}

NONE, UNK = E.NONE, E.UNKNOWN_MEMBER_ID
RIP, CNA = E.REBALANCE_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE
EXPECTED: dict[str, dict[str, object]] = {
    "Absent": {
        "join_known": UNK, "join_unknown_v3": PARKED, "join_unknown_v4": E.MEMBER_ID_REQUIRED,
        "sync": UNK, "heartbeat": UNK, "leave": (NONE, (UNK,)),
        "commit_member": E.ILLEGAL_GENERATION, "commit_simple": NONE, "fetch": (NONE, NONE),
        "describe": (NONE, "Dead"), "describe_v6": (E.GROUP_ID_NOT_FOUND, "Dead"),
        "list": (NONE, ()),
        "delete": E.GROUP_ID_NOT_FOUND, "offset_delete": (E.GROUP_ID_NOT_FOUND, None),
    },
    "Empty": {
        "join_known": UNK, "join_unknown_v3": PARKED, "join_unknown_v4": E.MEMBER_ID_REQUIRED,
        "sync": UNK, "heartbeat": UNK, "leave": (NONE, (UNK,)),
        "commit_member": UNK, "commit_simple": NONE, "fetch": (NONE, NONE),
        "describe": (NONE, "Empty"), "describe_v6": (NONE, "Empty"), "list": (NONE, ("Empty",)),
        "delete": NONE, "offset_delete": (NONE, NONE),
    },
    "PreparingRebalance": {
        "join_known": NONE, "join_unknown_v3": PARKED, "join_unknown_v4": E.MEMBER_ID_REQUIRED,
        "sync": RIP, "heartbeat": RIP, "leave": (NONE, (NONE,)),
        "commit_member": NONE, "commit_simple": UNK, "fetch": (NONE, NONE),
        "describe": (NONE, "PreparingRebalance"), "describe_v6": (NONE, "PreparingRebalance"),
        "list": (NONE, ("PreparingRebalance",)), "delete": E.NON_EMPTY_GROUP,
        "offset_delete": (NONE, E.GROUP_SUBSCRIBED_TO_TOPIC),
    },
    "CompletingRebalance": {
        "join_known": NONE, "join_unknown_v3": PARKED, "join_unknown_v4": E.MEMBER_ID_REQUIRED,
        "sync": NONE, "heartbeat": NONE, "leave": (NONE, (NONE,)),
        "commit_member": RIP, "commit_simple": UNK, "fetch": (NONE, NONE),
        "describe": (NONE, "CompletingRebalance"), "describe_v6": (NONE, "CompletingRebalance"),
        "list": (NONE, ("CompletingRebalance",)), "delete": E.NON_EMPTY_GROUP,
        "offset_delete": (NONE, E.GROUP_SUBSCRIBED_TO_TOPIC),
    },
    "Stable": {
        "join_known": NONE, "join_unknown_v3": PARKED, "join_unknown_v4": E.MEMBER_ID_REQUIRED,
        "sync": NONE, "heartbeat": NONE, "leave": (NONE, (NONE,)),
        "commit_member": NONE, "commit_simple": UNK, "fetch": (NONE, NONE),
        "describe": (NONE, "Stable"), "describe_v6": (NONE, "Stable"), "list": (NONE, ("Stable",)),
        "delete": E.NON_EMPTY_GROUP, "offset_delete": (NONE, E.GROUP_SUBSCRIBED_TO_TOPIC),
    },
    "Dead": {
        "join_known": CNA, "join_unknown_v3": CNA, "join_unknown_v4": CNA,
        "sync": CNA, "heartbeat": CNA, "leave": (CNA, ()),
        "commit_member": CNA, "commit_simple": CNA, "fetch": (NONE, NONE),
        "describe": (NONE, "Dead"), "describe_v6": (NONE, "Dead"), "list": (NONE, ("Dead",)),
        "delete": E.GROUP_ID_NOT_FOUND, "offset_delete": (E.GROUP_ID_NOT_FOUND, None),
    },
}


@pytest.mark.parametrize("api", list(APIS))
@pytest.mark.parametrize("state", list(EXPECTED))
def test_state_by_request(state: str, api: str) -> None:
    h, member, generation = _setup(state)
    assert APIS[api](h, member, generation) == EXPECTED[state][api]
    # Whatever happened, the group went through legal transitions only (they are asserted)
    # and no reply token was answered twice (the harness checks).


def test_sweep_covers_every_state_and_api() -> None:
    assert set(EXPECTED) == {"Absent", "Empty", "PreparingRebalance", "CompletingRebalance",
                             "Stable", "Dead"}
    for row in EXPECTED.values():
        assert set(row) == set(APIS)
