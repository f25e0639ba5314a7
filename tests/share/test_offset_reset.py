"""``share.auto.offset.reset``: latest (the default), earliest, by_duration."""

from __future__ import annotations

import pytest

from coordinator.share import initial_start_offset
from coordinator.share.offset_reset import parse_duration_ms, reset_timestamp


def test_latest_starts_at_the_high_watermark() -> None:
    assert initial_start_offset("latest", 5, 42) == 42


def test_earliest_starts_at_the_log_start_offset() -> None:
    assert initial_start_offset("earliest", 5, 42) == 5


def test_by_duration_starts_at_the_offset_for_the_timestamp() -> None:
    assert reset_timestamp("by_duration:PT1H", 10_000_000) == 10_000_000 - 3_600_000
    assert initial_start_offset("by_duration:PT1H", 5, 42, offset_for_timestamp=17) == 17
    # No record that recent: the high watermark, as Kafka.
    assert initial_start_offset("by_duration:PT1H", 5, 42, offset_for_timestamp=None) == 42


def test_reset_timestamp_is_none_unless_by_duration() -> None:
    assert reset_timestamp("latest", 1000) is None


@pytest.mark.parametrize(
    ("text", "ms"),
    [("P1D", 86_400_000), ("PT30M", 1_800_000), ("PT0.5S", 500), ("P1DT1H1M1S", 90_061_000)],
)
def test_parse_duration_ms(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "P", "PT", "1H", "PT-1S", "P1W"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="Invalid duration"):
        parse_duration_ms(text)


def test_an_unknown_reset_is_refused() -> None:
    with pytest.raises(ValueError, match=r"share\.auto\.offset\.reset"):
        initial_start_offset("none", 0, 0)
