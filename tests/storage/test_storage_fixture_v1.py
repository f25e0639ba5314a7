"""Replay of a log written by format version 1 with old value versions (the fixture)."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil

import pytest

from storage import record_codec
from storage.log import Log
from storage.records import (
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
FIXTURE_DIR = os.path.join(FIXTURES, "v1-log")

MEMBER = MemberMetadata("m-1", None, "c1", "/10.0.0.1", 10_000, 10_000, b"\x00\x01", b"\x00\x02")
EXPECTED = [
    Record(OffsetCommitKey("g-old", "t", 0), OffsetCommitValue(10, -1, "m0", 1_000, -1)),
    Record(OffsetCommitKey("g-old", "t", 1), OffsetCommitValue(11, -1, "", 1_001, 2_001)),
    Record(OffsetCommitKey("g-old", "t", 2), OffsetCommitValue(12, -1, "x", 1_002, -1)),
    Record(
        GroupMetadataKey("g-old"), GroupMetadataValue("consumer", 1, "range", "m-1", -1, (MEMBER,))
    ),
    Record(
        GroupMetadataKey("g-old"),
        GroupMetadataValue(
            "consumer",
            2,
            "range",
            "m-1",
            -1,
            (
                MemberMetadata(
                    "m-1", None, "c1", "/10.0.0.1", 60_000, 10_000, b"\x00\x01", b"\x00\x03"
                ),
            ),
        ),
    ),
    Record(GroupMetadataKey("g2"), GroupMetadataValue("consumer", 1, None, None, 5_000, ())),
    # entry 6: Kafka 4's ConsumerGroupMetadata record (key type 3), written by hand
    Record(ConsumerGroupMetadataKey("g3"), ConsumerGroupMetadataValue(7)),
    Record(OffsetCommitKey("g-old", "t", 0), None),
]


def _generator() -> object:
    spec = importlib.util.spec_from_file_location(
        "make_v1_fixture", os.path.join(FIXTURES, "make_v1_fixture.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fixture_is_what_the_script_builds() -> None:
    with open(os.path.join(FIXTURE_DIR, "00000000000000000000.log"), "rb") as f:
        assert f.read() == _generator().build()  # type: ignore[attr-defined]


def test_replay_v1_fixture(tmp_path: object, caplog: pytest.LogCaptureFixture) -> None:
    data_dir = os.path.join(str(tmp_path), "data")
    shutil.copytree(FIXTURE_DIR, data_dir)  # open() takes a lock and may repair
    record_codec._warned_key_versions.discard(3)
    with caplog.at_level(logging.WARNING), Log.open(data_dir) as log:
        assert log.recovery == []
        assert list(log.replay()) == EXPECTED
        assert log.next_index == 8
        log.append([EXPECTED[0]])  # and the current writer continues it
    assert not any("unknown key version" in r.message for r in caplog.records)
    with Log.open(data_dir) as log:
        assert list(log.replay()) == [*EXPECTED, EXPECTED[0]]
