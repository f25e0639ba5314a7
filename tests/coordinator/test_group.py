"""ClassicGroup bookkeeping: mirrors of a selection of ClassicGroupTest.java."""

from __future__ import annotations

import pytest
from scenarios import subscription

from coordinator.core import CoordinatorStateError
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member, Protocols
from coordinator.core.classic.state import COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE, STABLE
from coordinator.core.result import Effects


def _member(member_id: str, protocols: Protocols, instance: str | None = None,
            protocol_type: str = "consumer") -> Member:
    return Member("g", member_id, instance, "client", "host", 60000, 30000, protocol_type,
                  protocols)


def _fx() -> Effects:
    return Effects(lambda record: None)


def _group() -> ClassicGroup:
    return ClassicGroup("g", EMPTY, 0)


def test_select_protocol() -> None:
    group = _group()
    group.add(_member("m1", (("range", b""), ("roundrobin", b""))), None)
    assert group.select_protocol() == "range"
    group.add(_member("m2", (("roundrobin", b""), ("range", b""))), None)
    group.add(_member("m3", (("roundrobin", b""), ("range", b""))), None)
    assert group.select_protocol() == "roundrobin"


def test_select_protocol_raises_if_no_members() -> None:
    with pytest.raises(CoordinatorStateError):
        _group().select_protocol()


def test_select_protocol_chooses_compatible_protocol() -> None:
    group = _group()
    group.add(_member("m1", (("range", b""), ("roundrobin", b""))), None)
    group.add(_member("m2", (("roundrobin", b""), ("blah", b""))), None)
    assert group.select_protocol() == "roundrobin"


def test_supports_protocols() -> None:
    group = _group()
    assert not group.supports_protocols("consumer", [])
    assert not group.supports_protocols("", ["range"])
    assert group.supports_protocols("consumer", ["range", "roundrobin"])
    group.add(_member("m1", (("range", b""), ("roundrobin", b""))), None)
    group.transition_to(PREPARING_REBALANCE, 0)
    assert group.supports_protocols("consumer", ["roundrobin", "foo"])
    assert not group.supports_protocols("consumer", ["foo", "bar"])
    assert not group.supports_protocols("connect", ["range"])


def test_subscribed_topics() -> None:
    group = _group()
    assert group.subscribed_topics is None
    group.add(_member("m1", (("range", subscription("foo")),)), None)
    group.transition_to(PREPARING_REBALANCE, 0)
    group.init_next_generation(1)
    assert group.subscribed_topics == {"foo"}
    group.add(_member("m2", (("range", subscription("bar", "foo")),)), None)
    group.transition_to(PREPARING_REBALANCE, 2)
    group.init_next_generation(3)
    assert group.subscribed_topics == {"foo", "bar"}
    assert group.is_subscribed_to_topic("bar")
    assert not group.is_subscribed_to_topic("baz")


def test_subscribed_topics_non_consumer_group() -> None:
    group = _group()
    group.add(_member("m1", (("range", subscription("foo")),), protocol_type="connect"), None)
    group.transition_to(PREPARING_REBALANCE, 0)
    group.init_next_generation(1)
    assert group.subscribed_topics is None
    assert group.is_subscribed_to_topic("anything")


def test_init_next_generation() -> None:
    group = _group()
    group.add(_member("m1", (("roundrobin", b""),)), "token")
    group.transition_to(PREPARING_REBALANCE, 0)
    group.init_next_generation(5)
    assert group.generation_id == 1
    assert group.protocol_name == "roundrobin"
    assert group.state is COMPLETING_REBALANCE
    assert group.current_state_timestamp == 5


def test_init_next_generation_empty_group() -> None:
    group = _group()
    group.transition_to(PREPARING_REBALANCE, 0)
    group.init_next_generation(1)
    assert group.state is EMPTY
    assert group.generation_id == 1
    assert group.protocol_name is None


def test_cannot_add_pending_member_if_stable() -> None:
    group = _group()
    group.add(_member("m1", (("range", b""),)), None)
    with pytest.raises(CoordinatorStateError):
        group.add_pending_member("m1", 10)


def test_removal_from_pending_after_member_is_stable() -> None:
    group = _group()
    group.add_pending_member("m1", 10)
    assert "m1" in group.pending_members
    group.add(_member("m1", (("range", b""),)), None)
    assert "m1" not in group.pending_members


def test_removal_from_pending_when_member_is_removed() -> None:
    group = _group()
    group.add_pending_member("m1", 10)
    group.remove("m1")
    assert not group.pending_members


def test_cannot_add_static_member_if_already_present() -> None:
    group = _group()
    group.add(_member("m1", (("range", b""),), "instance"), None)
    with pytest.raises(CoordinatorStateError):
        group.add(_member("m2", (("range", b""),), "instance"), None)


def test_new_generation_clears_pending_sync_members() -> None:
    group = _group()
    group.add(_member("m1", (("range", b""),)), None)
    group.transition_to(PREPARING_REBALANCE, 0)
    group.pending_sync_members.add("m1")
    group.init_next_generation(1)
    assert not group.pending_sync_members


def test_elect_new_joined_leader() -> None:
    group = _group()
    group.add(_member("leader", (("range", b""),)), None)
    group.add(_member("follower", (("range", b""),)), "token")
    assert group.leader_id == "leader"
    assert group.maybe_elect_new_joined_leader()
    assert group.leader_id == "follower"


def test_maybe_elect_new_joined_leader_choose_existing() -> None:
    group = _group()
    group.add(_member("leader", (("range", b""),)), "t1")
    group.add(_member("follower", (("range", b""),)), "t2")
    assert group.maybe_elect_new_joined_leader()
    assert group.leader_id == "leader"


def test_replace_group_instance_with_non_existing_member() -> None:
    with pytest.raises(CoordinatorStateError):
        _group().replace_static_member("instance", "old", "new", _fx())


def test_replace_group_instance() -> None:
    group = _group()
    member = _member("old", (("range", b""),), "instance")
    group.add(member, "join-token")
    member.sync_token = "sync-token"
    fx = _fx()
    replaced = group.replace_static_member("instance", "old", "new", fx)
    assert replaced.member_id == "new"
    assert group.leader_id == "new"
    assert group.static_members == {"instance": "new"}
    assert list(group.members) == ["new"]
    assert {r.token: r.response["error_code"] for r in fx.replies} == {"join-token": 82,
                                                                       "sync-token": 82}
    assert group.num_awaiting_join == 0


def test_is_in_states() -> None:
    group = _group()
    assert group.state.lower_name == "empty"
    group.add(_member("m", (("range", b""),)), None)
    group.transition_to(PREPARING_REBALANCE, 0)
    group.init_next_generation(0)
    group.transition_to(STABLE, 0)
    assert group.state.lower_name == "stable"
