"""wire.FrameReader: size-prefixed framing, sans-I/O.

Frames arrive in arbitrary chunks; the reader hands out whole payloads in order, keeps
partial ones buffered (``buffered`` counts every received byte not yet handed out, size
prefixes included), and refuses a negative or oversize size prefix as soon as its four
bytes are in, without waiting for (or allocating) the announced body.
"""

from __future__ import annotations

import itertools
import struct
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wire

PAYLOADS = [b"", b"a", b"\x00\x00\x00\x00", b"kafka" * 7, bytes(range(256)), b"z"]


def frames_of(payloads: list[bytes]) -> bytes:
    return b"".join(wire.frame(p) for p in payloads)


def drain(reader: wire.FrameReader) -> list[bytes]:
    out = []
    while (item := reader.next_frame()) is not wire.NEED_DATA:
        assert isinstance(item, bytes)
        out.append(item)
    return out


def test_frame_helper() -> None:
    assert wire.frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert wire.frame(b"") == b"\x00\x00\x00\x00"


def test_empty_reader_needs_data() -> None:
    reader = wire.FrameReader()
    assert reader.next_frame() is wire.NEED_DATA
    assert reader.buffered == 0
    reader.receive_data(b"")
    assert reader.next_frame() is wire.NEED_DATA
    assert reader.buffered == 0


def test_many_frames_in_one_chunk() -> None:
    reader = wire.FrameReader()
    reader.receive_data(frames_of(PAYLOADS))
    assert reader.buffered == len(frames_of(PAYLOADS))
    assert drain(reader) == PAYLOADS
    assert reader.buffered == 0
    assert reader.next_frame() is wire.NEED_DATA


def test_one_frame_per_call_in_order() -> None:
    reader = wire.FrameReader()
    reader.receive_data(frames_of(PAYLOADS))
    remaining = len(frames_of(PAYLOADS))
    for payload in PAYLOADS:
        assert reader.next_frame() == payload
        remaining -= 4 + len(payload)
        assert reader.buffered == remaining


def test_split_at_every_position() -> None:
    data = frames_of(PAYLOADS)
    for cut in range(len(data) + 1):
        reader = wire.FrameReader()
        reader.receive_data(data[:cut])
        first = drain(reader)
        assert reader.buffered == cut - sum(4 + len(p) for p in first)
        reader.receive_data(data[cut:])
        assert first + drain(reader) == PAYLOADS, f"cut at {cut}"
        assert reader.buffered == 0


def test_split_at_every_pair_of_positions() -> None:
    payloads = [b"", b"ab", b"", b"xyz1", b"q"]
    data = frames_of(payloads)
    for i, j in itertools.combinations_with_replacement(range(len(data) + 1), 2):
        reader = wire.FrameReader()
        got = []
        for part in (data[:i], data[i:j], data[j:]):
            reader.receive_data(part)
            got += drain(reader)
        assert got == payloads, f"cuts at {i}, {j}"
        assert reader.buffered == 0


def test_byte_by_byte() -> None:
    data = frames_of(PAYLOADS)
    reader = wire.FrameReader()
    got = []
    for i in range(len(data)):
        reader.receive_data(data[i : i + 1])
        got += drain(reader)
        assert reader.buffered == i + 1 - sum(4 + len(p) for p in got)
    assert got == PAYLOADS


def test_zero_length_frame() -> None:
    reader = wire.FrameReader()
    reader.receive_data(b"\x00\x00\x00")
    assert reader.next_frame() is wire.NEED_DATA
    reader.receive_data(b"\x00")
    assert reader.next_frame() == b""
    assert reader.buffered == 0
    assert reader.next_frame() is wire.NEED_DATA


def test_zero_length_frames_back_to_back() -> None:
    reader = wire.FrameReader()
    reader.receive_data(b"\x00" * 4 * 5 + wire.frame(b"x") + b"\x00" * 4)
    assert drain(reader) == [b""] * 5 + [b"x", b""]


def test_zero_max_accepts_only_empty_frames() -> None:
    reader = wire.FrameReader(max_frame_bytes=0)
    reader.receive_data(b"\x00\x00\x00\x00\x00\x00\x00\x01")
    assert reader.next_frame() == b""
    with pytest.raises(wire.FrameTooLarge):
        reader.next_frame()


@pytest.mark.parametrize("prefix", [b"\xff\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xfe",
                                    b"\x80\x00\x00\x01"])
def test_negative_prefix_refused_immediately(prefix: bytes) -> None:
    reader = wire.FrameReader()
    for byte in prefix[:3]:
        reader.receive_data(bytes([byte]))
        assert reader.next_frame() is wire.NEED_DATA
    reader.receive_data(prefix[3:])
    with pytest.raises(wire.FrameTooLarge) as info:
        reader.next_frame()
    assert isinstance(info.value, wire.CorruptFrame)
    assert str(struct.unpack(">i", prefix)[0]) in str(info.value)
    assert reader.buffered == 4


def test_oversize_prefix_refused_before_the_body() -> None:
    reader = wire.FrameReader(max_frame_bytes=100)
    reader.receive_data(struct.pack(">i", 101))
    with pytest.raises(wire.FrameTooLarge) as info:
        reader.next_frame()
    assert "101" in str(info.value)
    assert reader.buffered == 4


def test_oversize_prefix_refused_with_part_of_the_body() -> None:
    reader = wire.FrameReader(max_frame_bytes=100)
    reader.receive_data(struct.pack(">i", 1000) + b"x" * 10)
    with pytest.raises(wire.FrameTooLarge):
        reader.next_frame()


def test_oversize_frame_after_good_ones() -> None:
    reader = wire.FrameReader(max_frame_bytes=8)
    reader.receive_data(wire.frame(b"12345678") + struct.pack(">i", 9))
    assert reader.next_frame() == b"12345678"
    with pytest.raises(wire.FrameTooLarge):
        reader.next_frame()


def test_prefix_equal_to_max_is_allowed() -> None:
    reader = wire.FrameReader(max_frame_bytes=100)
    reader.receive_data(struct.pack(">i", 100))
    assert reader.next_frame() is wire.NEED_DATA
    reader.receive_data(b"y" * 99)
    assert reader.next_frame() is wire.NEED_DATA
    reader.receive_data(b"y")
    assert reader.next_frame() == b"y" * 100


def test_default_max_is_kafkas_socket_request_max_bytes() -> None:
    assert wire.DEFAULT_MAX_FRAME_BYTES == 104_857_600
    reader = wire.FrameReader()
    reader.receive_data(struct.pack(">i", 104_857_600))
    assert reader.next_frame() is wire.NEED_DATA
    reader = wire.FrameReader()
    reader.receive_data(struct.pack(">i", 104_857_601))
    with pytest.raises(wire.FrameTooLarge):
        reader.next_frame()


def _peak_bytes(fn: object) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("prefix", [b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00"])
def test_two_gigabyte_prefix_allocates_nothing(prefix: bytes) -> None:
    """0x7fffffff (2 GiB - 1) and 0x80000000 (2 GiB, negative as int32) are refused with the
    default maximum, and nothing near their size is allocated."""
    reader = wire.FrameReader()

    def feed() -> None:
        reader.receive_data(prefix)
        with pytest.raises(wire.FrameTooLarge):
            reader.next_frame()

    assert _peak_bytes(feed) < 64 * 1024
    assert reader.buffered == 4


def test_two_gigabyte_prefix_within_max_is_not_preallocated() -> None:
    """Even when 2 GiB is allowed, announcing it allocates nothing: the body is buffered
    only as it arrives."""
    reader = wire.FrameReader(max_frame_bytes=2**31 - 1)

    def feed() -> None:
        reader.receive_data(b"\x7f\xff\xff\xff")
        assert reader.next_frame() is wire.NEED_DATA
        for _ in range(16):
            reader.receive_data(b"x" * 1024)
            assert reader.next_frame() is wire.NEED_DATA

    assert _peak_bytes(feed) < 256 * 1024
    assert reader.buffered == 4 + 16 * 1024


def test_large_frame_in_small_chunks_is_linear() -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    data = wire.frame(payload) + wire.frame(b"tail")
    reader = wire.FrameReader()
    got = []
    start = time.perf_counter()
    for i in range(0, len(data), 1000):
        reader.receive_data(data[i : i + 1000])
        got += drain(reader)
    assert time.perf_counter() - start < 2.0
    assert got == [payload, b"tail"]
    assert reader.buffered == 0


def test_buffer_is_compacted_when_frames_are_consumed() -> None:
    """Consumed frames do not pile up behind a partial one: the buffered count and the
    reader's memory stay bounded while thousands of frames go through it."""
    reader = wire.FrameReader()
    chunk = wire.frame(b"p" * 100) * 10 + wire.frame(b"q" * 100)[:50]
    rest = wire.frame(b"q" * 100)[50:]

    def run() -> None:
        for _ in range(2000):  # 2.2 MB in total
            reader.receive_data(chunk)
            assert drain(reader) == [b"p" * 100] * 10
            assert reader.buffered == 50
            reader.receive_data(rest)
            assert drain(reader) == [b"q" * 100]
            assert reader.buffered == 0

    assert _peak_bytes(run) < 256 * 1024


@st.composite
def chunked_stream(draw: st.DrawFn) -> tuple[list[bytes], list[bytes]]:
    payloads = draw(st.lists(st.binary(max_size=40), max_size=12))
    data = frames_of(payloads)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=20)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    return payloads, chunks


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(chunked_stream())
def test_any_chunking_preserves_frames_and_accounting(
    case: tuple[list[bytes], list[bytes]],
) -> None:
    payloads, chunks = case
    reader = wire.FrameReader()
    received = consumed = 0
    got: list[bytes] = []
    for chunk in chunks:
        reader.receive_data(chunk)
        received += len(chunk)
        assert reader.buffered == received - consumed
        while (payload := reader.next_frame()) is not wire.NEED_DATA:
            assert isinstance(payload, bytes)
            got.append(payload)
            consumed += 4 + len(payload)
            assert reader.buffered == received - consumed
    assert got == payloads
    assert reader.buffered == 0
