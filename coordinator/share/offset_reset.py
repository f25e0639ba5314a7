"""``share.auto.offset.reset``: where a share partition with no state starts (KIP-932).

``latest`` (the default) starts at the high watermark, ``earliest`` at the log start offset,
``by_duration:<ISO-8601 duration>`` at the first record at or after ``now - duration`` (the
caller looks that offset up in the log; none found means the high watermark, as Kafka)."""

from __future__ import annotations

import re

__all__ = ["initial_start_offset", "parse_duration_ms", "reset_timestamp"]

_DURATION = re.compile(
    r"P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d{1,3})?)S)?)?"
)


def parse_duration_ms(text: str) -> int:
    """Milliseconds of an ISO-8601 duration ``PnDTnHnMn.nS`` (ValueError if malformed)."""
    match = _DURATION.fullmatch(text.strip().upper())
    if match is None or text.strip().upper() in ("P", "PT"):
        raise ValueError(f"Invalid duration: {text}")
    parts = match.groupdict()
    seconds = float(parts["seconds"] or 0)
    return (
        int(parts["days"] or 0) * 86_400_000
        + int(parts["hours"] or 0) * 3_600_000
        + int(parts["minutes"] or 0) * 60_000
        + round(seconds * 1000)
    )


def reset_timestamp(reset: str, now_ms: int) -> int | None:
    """The timestamp to look up for a ``by_duration:`` reset, else None."""
    kind, _, duration = reset.partition(":")
    if kind.strip().lower() != "by_duration":
        return None
    return now_ms - parse_duration_ms(duration)


def initial_start_offset(
    reset: str,
    log_start_offset: int,
    high_watermark: int,
    offset_for_timestamp: int | None = None,
) -> int:
    """The start offset of a new share partition under ``share.auto.offset.reset``."""
    kind = reset.partition(":")[0].strip().lower()
    if kind == "earliest":
        return log_start_offset
    if kind == "latest":
        return high_watermark
    if kind == "by_duration":
        if offset_for_timestamp is None:
            return high_watermark
        return max(log_start_offset, min(offset_for_timestamp, high_watermark))
    raise ValueError(f"Invalid share.auto.offset.reset: {reset}")
