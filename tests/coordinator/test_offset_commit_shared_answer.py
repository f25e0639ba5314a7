"""An all-NONE OffsetCommit answer is shared per (topic names, partition indexes) shape
(``offset_commit.shared_answer``) and its encoding kept per version in its
``encoded_tails`` by ``wire.apis.offset_commit``: the frames equal the construct codec's for a
plain dict of the same answer, byte for byte, for every version and correlation id, and
the cache of shared answers -- the manager's, not a module's -- stays within its bound."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import wire
from coordinator.config import CoordinatorConfig
from coordinator.core import offset_commit
from coordinator.core.group_manager import SHARED_ANSWERS_LIMIT, GroupManager
from wire import fast_codec

INT32 = st.integers(-(2**31), 2**31 - 1)
SHAPES = st.lists(
    st.tuples(st.text(max_size=8), st.lists(st.integers(0, 2**31 - 1), max_size=5)
              .map(tuple)),
    max_size=3,
).map(tuple)


def _manager() -> GroupManager:
    return GroupManager(CoordinatorConfig(), lambda: "id")


def _plain(shape: Any) -> dict[str, Any]:
    return {"topics": [
        {"name": name, "partitions": [{"partition_index": i, "error_code": 0} for i in indexes]}
        for name, indexes in shape]}


@settings(max_examples=200, deadline=None)
@given(SHAPES, st.integers(0, 10), INT32, INT32)
def test_shared_answer_encodes_as_the_codec(
    shape: Any, version: int, first: int, second: int
) -> None:
    manager = _manager()
    answer = offset_commit.shared_answer(manager, shape)
    assert type(answer) is offset_commit.SharedAnswer
    assert answer == _plain(shape)
    assert offset_commit.shared_answer(manager, shape) is answer  # one per shape
    assert offset_commit.shared_answer(_manager(), shape) is not answer  # per manager
    for correlation_id in (first, second, first):  # the kept encoding, then reused
        assert fast_codec.encode_response(8, version, correlation_id, answer) == \
            wire.encode_response(8, version, correlation_id, _plain(shape))


def test_shared_answers_stay_within_their_bound() -> None:
    limit = SHARED_ANSWERS_LIMIT
    manager = _manager()
    held = manager.shared_answers
    for n in range(limit * 2 + 3):
        shape = (("t", (n,)),)
        answer = offset_commit.shared_answer(manager, shape)
        assert answer == _plain(shape)
        assert len(held) <= limit
    assert 0 < len(held) <= limit


def test_a_refused_partition_gets_its_own_answer() -> None:
    """An answer with OFFSET_METADATA_TOO_LARGE is not shared."""

    class Config:
        offset_metadata_max_bytes = 4

    class GroupManager:
        config = Config()
        shared_answers: dict[Any, Any] = {}

    request: Any = {"group_id": "g", "retention_time_ms": -1, "topics": [
        {"name": "t", "partitions": [
            {"partition_index": i, "committed_offset": 1, "committed_leader_epoch": -1,
             "committed_metadata": metadata, "commit_timestamp": -1}
            for i, metadata in enumerate(["", "toolong", None])]}]}
    records, answer = offset_commit.commit_records(GroupManager(), request, 8, 1000)  # type: ignore[arg-type]
    assert type(answer) is dict
    assert answer == {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0},
        {"partition_index": 1, "error_code": 12},
        {"partition_index": 2, "error_code": 0}]}]}
    assert [r.key.partition for r in records] == [0, 2]  # type: ignore[union-attr]
