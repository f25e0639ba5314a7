"""Wire codec throughput: kcoord's construct codec (compiled and uncompiled) beside kio's
Rust-backed codec, measured side by side in one run on one core.

    python tests/benchmarks/bench_wire.py [--seconds 0.5] [--repeats 7]

Each row is one decode + one encode of the frame named (header included), reported as the
median frames/s over the repeats. The ratio column is kio / kcoord-compiled (lower is
better; ≤ 3 is the target).
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import wire
from wire.header import REQUEST_HEADER, RESPONSE_HEADER
from wire.schema import message_struct

try:
    from kio.index import load_request_schema, load_response_schema
    from kio.serial import entity_reader, entity_writer
except ImportError:  # pragma: no cover - kio is a test dependency
    load_request_schema = None


def _record_batch(records: int = 3) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )
    for i in range(records):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=b"key-%d" % i, value=b"v" * 100,
                       headers=[])
    return bytes(builder.build())


def cases() -> list[dict[str, Any]]:
    """The four rows of the issue: (api, version, direction, header version, body)."""
    member = "consumer-1-0d1c5d2e-5b1c-4a7e-9f38-2f3c1b0e4a55"
    heartbeat = {"group_id": "group-1", "generation_id": 7, "member_id": member,
                 "group_instance_id": None}
    join = {
        "throttle_time_ms": 0, "error_code": 0, "generation_id": 3, "protocol_type": "consumer",
        "protocol_name": "range", "leader": member + "-0", "skip_assignment": False,
        "member_id": member + "-0",
        "members": [
            {"member_id": f"{member}-{i}", "group_instance_id": None,
             "metadata": b"\x00\x00\x00\x00\x00\x01\x00\x06topic1\xff\xff\xff\xff"}
            for i in range(16)
        ],
    }
    commit = {
        "group_id": "group-1", "generation_id_or_member_epoch": 7, "member_id": member,
        "group_instance_id": None,
        "topics": [{"name": "topic1", "partitions": [
            {"partition_index": p, "committed_offset": 1000 + p, "committed_leader_epoch": 0,
             "committed_metadata": ""} for p in range(32)]}],
    }
    batch = _record_batch()
    fetch = {
        "throttle_time_ms": 0, "error_code": 0, "session_id": 0,
        "responses": [{"topic": "topic1", "partitions": [
            {"partition_index": p, "error_code": 0, "high_watermark": 3, "last_stable_offset": 3,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
             "records": batch} for p in range(32)]}],
    }
    return [
        {"row": "Heartbeat v4 request -> response", "key": 12, "version": 4, "kind": "roundtrip",
         "body": heartbeat, "response": {"throttle_time_ms": 0, "error_code": 0}},
        {"row": "JoinGroup v7 response, 16 members", "key": 11, "version": 7,
         "kind": "response", "body": join},
        {"row": "OffsetCommit v8 request, 32 partitions", "key": 8, "version": 8,
         "kind": "request", "body": commit},
        {"row": "Fetch v12 response, 32 partitions x 1 batch", "key": 1, "version": 12,
         "kind": "response", "body": fetch},
    ]


# -- kcoord, compiled (the production path: wire.codec) ---------------------------------


def kcoord_compiled(case: dict[str, Any]) -> Callable[[], None]:
    key, version, body = case["key"], case["version"], case["body"]
    if case["kind"] == "roundtrip":
        frame = wire.encode_request(key, version, 1, "bench", body)[4:]
        response = case["response"]

        def run() -> None:
            req = wire.decode_request(frame)
            wire.encode_response(key, version, req.correlation_id, response)

        return run
    if case["kind"] == "request":
        frame = wire.encode_request(key, version, 1, "bench", body)[4:]

        def run_request() -> None:
            req = wire.decode_request(frame)
            wire.encode_request(key, version, req.correlation_id, req.client_id, req.body)

        return run_request
    payload = wire.encode_response(key, version, 1, body)[4:]

    def run_response() -> None:
        corr, decoded = wire.decode_response(key, version, payload)
        wire.encode_response(key, version, corr, decoded)

    return run_response


# -- kcoord, uncompiled (the reference Adapters, same schemas) ----------------------------


def kcoord_uncompiled(case: dict[str, Any]) -> Callable[[], None]:
    key, version, body = case["key"], case["version"], case["body"]
    spec = wire.lookup(key)
    assert spec is not None
    req_hdr = message_struct(REQUEST_HEADER, 2 if spec.request.is_flexible(version) else 1,
                             compiled=False)
    resp_hdr = message_struct(RESPONSE_HEADER, 1 if spec.response.is_flexible(version) else 0,
                              compiled=False)
    req_body = message_struct(spec.request, version, compiled=False)
    resp_body = message_struct(spec.response, version, compiled=False)
    header = {"request_api_key": key, "request_api_version": version, "correlation_id": 1,
              "client_id": "bench"}
    if case["kind"] == "response":
        data = resp_hdr.build({"correlation_id": 1}) + resp_body.build(body)

        def run_response() -> None:
            stream = io.BytesIO(data)
            h = resp_hdr.parse_stream(stream)
            b = resp_body.parse_stream(stream)
            resp_hdr.build(h) + resp_body.build(b)

        return run_response
    data = req_hdr.build(header) + req_body.build(body)
    response = case.get("response")

    def run_request() -> None:
        stream = io.BytesIO(data)
        h = req_hdr.parse_stream(stream)
        b = req_body.parse_stream(stream)
        if response is not None:
            resp_hdr.build({"correlation_id": h.correlation_id}) + resp_body.build(response)
        else:
            req_hdr.build(h) + req_body.build(b)

    return run_request


# -- kio (Rust parse, Python write) -------------------------------------------------------


def _kio_object(cls: Any, value: Any) -> Any:
    """Build a kio entity from a kcoord-style dict (names differ only by a `_ms` suffix)."""
    import dataclasses
    import datetime
    import typing

    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        candidates = (f.name, f.name + "_ms")
        name = next((c for c in candidates if c in value), None)
        if name is None:
            continue
        v = value[name]
        kafka_type = f.metadata.get("kafka_type", "")
        if kafka_type.startswith("timedelta"):
            v = datetime.timedelta(milliseconds=v)
        elif kafka_type == "error_code":
            from kio.schema.errors import ErrorCode

            v = ErrorCode(v)
        elif isinstance(v, list):
            hint = hints[f.name]
            if type(None) in typing.get_args(hint):  # Optional[tuple[...]]
                hint = next(a for a in typing.get_args(hint) if a is not type(None))
            args = typing.get_args(hint)
            inner = args[0] if args else None
            if inner is not None and dataclasses.is_dataclass(inner):
                v = tuple(_kio_object(inner, x) for x in v)
            else:
                v = tuple(v)
        elif isinstance(v, uuid.UUID):
            pass
        kwargs[f.name] = v
    return cls(**kwargs)


def kio_codec(case: dict[str, Any]) -> Callable[[], None] | None:
    if load_request_schema is None:
        return None
    key, version = case["key"], case["version"]
    request_cls = load_request_schema(key, version)
    response_cls = load_response_schema(key, version)
    req_header_cls = request_cls.__header_schema__
    resp_header_cls = response_cls.__header_schema__
    if case["kind"] == "response":
        cls, header_cls = response_cls, resp_header_cls
        header = resp_header_cls(correlation_id=1)
    else:
        cls, header_cls = request_cls, req_header_cls
        header = req_header_cls(request_api_key=key, request_api_version=version,
                                correlation_id=1, client_id="bench")
    obj = _kio_object(cls, case["body"])
    buf = io.BytesIO()
    entity_writer(header_cls)(buf, header)
    entity_writer(cls)(buf, obj)
    data = buf.getvalue()
    read_header, read_body = entity_reader(header_cls), entity_reader(cls)
    write_header, write_body = entity_writer(header_cls), entity_writer(cls)
    response = case.get("response")
    response_obj = _kio_object(response_cls, response) if response is not None else None
    write_resp_header, write_resp = entity_writer(resp_header_cls), entity_writer(response_cls)

    def run() -> None:
        h, n = read_header(data, 0)
        b, _ = read_body(data, n)
        out = io.BytesIO()
        if response_obj is not None:
            write_resp_header(out, resp_header_cls(correlation_id=h.correlation_id))
            write_resp(out, response_obj)
        else:
            write_header(out, h)
            write_body(out, b)

    return run


def measure(fn: Callable[[], None], seconds: float, repeats: int) -> float:
    """Median operations per second over ``repeats`` timed windows."""
    for _ in range(50):
        fn()
    rates = []
    for _ in range(repeats):
        count = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(20):
                fn()
            count += 20
            now = time.perf_counter()
            if now >= deadline:
                break
        rates.append(count / (now - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d')} · {platform.machine()} · Python "
          f"{sys.version.split()[0]} · {' '.join(sys.argv)}")
    print("| row | kcoord compiled (frames/s) | kcoord uncompiled | kio | kio / compiled |")
    print("|---|---:|---:|---:|---:|")
    for case in cases():
        compiled = measure(kcoord_compiled(case), args.seconds, args.repeats)
        uncompiled = measure(kcoord_uncompiled(case), args.seconds, args.repeats)
        kio_fn = kio_codec(case)
        kio_rate = measure(kio_fn, args.seconds, args.repeats) if kio_fn else float("nan")
        print(f"| {case['row']} | {compiled:,.0f} | {uncompiled:,.0f} | {kio_rate:,.0f} | "
              f"{kio_rate / compiled:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
