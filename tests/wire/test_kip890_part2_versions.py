"""KIP-890 part 2 on the wire, byte by byte: EndTxn v5's response carries the producer id
and epoch (absent below v5); TxnOffsetCommit v5 and Produce v12 are laid out as v4 / v11
(only the meaning changed). kio's generated schemas check every field elsewhere
(test_oracle_kio.py); these pin the bytes a TV2 producer reads."""

from __future__ import annotations

import struct

import wire

END_TXN, TXN_OFFSET_COMMIT, PRODUCE = 26, 28, 0
BODY = {"throttle_time_ms": 0, "error_code": 0, "producer_id": 7, "producer_epoch": 3}


def _payload(frame: bytes) -> bytes:
    """The response without its size prefix."""
    (size,) = struct.unpack_from(">i", frame)
    assert size == len(frame) - 4
    return frame[4:]


def test_end_txn_v5_response_carries_the_producer_id_and_epoch() -> None:
    v5 = _payload(wire.encode_response(END_TXN, 5, 9, BODY))
    # correlation id, header tags, throttle, error, producer id (int64), epoch (int16), tags
    assert v5 == struct.pack(">ibihqhb", 9, 0, 0, 0, 7, 3, 0)
    _, decoded = wire.decode_response(END_TXN, 5, v5)
    assert (decoded.producer_id, decoded.producer_epoch) == (7, 3)


def test_end_txn_below_v5_has_no_producer_fields() -> None:
    v4 = _payload(wire.encode_response(END_TXN, 4, 9, BODY))
    assert v4 == struct.pack(">ibihb", 9, 0, 0, 0, 0)
    v1 = _payload(wire.encode_response(END_TXN, 1, 9, BODY))
    assert v1 == struct.pack(">iih", 9, 0, 0)


def test_txn_offset_commit_v5_and_produce_v12_keep_their_layouts() -> None:
    commit = {"transactional_id": "t", "group_id": "g", "producer_id": 7, "producer_epoch": 3,
              "generation_id": -1, "member_id": "", "group_instance_id": None,
              "topics": [{"name": "x", "partitions": [
                  {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                   "committed_metadata": ""}]}]}
    v4 = wire.encode_request(TXN_OFFSET_COMMIT, 4, 1, "c", commit)
    v5 = wire.encode_request(TXN_OFFSET_COMMIT, 5, 1, "c", commit)
    # Only the header's api version differs.
    assert len(v4) == len(v5) and v4[:6] + v4[8:] == v5[:6] + v5[8:]
    produce = {"transactional_id": "t", "acks": -1, "timeout_ms": 1000,
               "topic_data": [{"name": "x", "partition_data": [{"index": 0, "records": b""}]}]}
    v11 = wire.encode_request(PRODUCE, 11, 1, "c", produce)
    v12 = wire.encode_request(PRODUCE, 12, 1, "c", produce)
    assert len(v11) == len(v12) and v11[:6] + v11[8:] == v12[:6] + v12[8:]
    assert struct.unpack_from(">hh", v12, 4) == (PRODUCE, 12)
