"""The server's path of one request, in process and without sockets: frame bytes -> the
connection's decoder -> the handler's ``submit`` (the broker's topic check, the core, the
records appended to a real log under ``--fsync interval``) -> the reply encoded.

    python tests/benchmarks/bench_commit_path.py [--requests 3000] [--repeats 7]
        [--profile ROW]

Rows: Heartbeat, OffsetCommit of 1 and of 32 partitions (a one-member group, v4 / v8 as
bench_server sends them), and a steady ConsumerGroupHeartbeat v1 (a one-member consumer
group, every unchanged field null, as librdkafka sends it). Each row reports CPU
microseconds per request (``time.process_time``, so a loaded machine skews it less than wall
time): the median and the minimum over the repeats. ``--profile ROW`` (hb, oc1, oc32, cgh)
prints a cProfile of that row instead. Run it from two checkouts (``PYTHONPATH=<checkout>``)
to compare them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import wire
from coordinator.server.app import serve
from coordinator.server.context import RequestContext
from coordinator.server.options import ServeOptions
from wire import fast_codec

TOPIC = "bench-topic"


def _request(key: int, version: int, body: dict[str, Any]) -> bytes:
    return wire.encode_request(key, version, 1, "bench", body)[4:]


async def _call(state: Any, payload: bytes) -> Any:
    request = wire.decode_request(payload)
    ctx = RequestContext(state, 1, "/127.0.0.1", "bench", request.api_version,
                         request.correlation_id)
    return await state.handlers[request.api_key](ctx, request)


async def _serve_one(state: Any, payload: bytes) -> bytes:
    """What the connection does for a pipelinable request (its reply is ready at once
    unless the log was busy: then it is awaited, as the connection's pipeline does)."""
    request = fast_codec.decode_request(payload)
    ctx = RequestContext(state, 1, "/127.0.0.1", request.client_id, request.api_version,
                         request.correlation_id)
    pending = state.handlers[request.api_key].submit(ctx, request)
    assert pending is not None
    body = pending.result() if pending.ready() else await pending.wait()
    return bytes(fast_codec.encode_response(request.api_key, request.api_version,
                                            request.correlation_id, body))


async def _rows(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        options = ServeOptions(port=0, data_dir=data_dir, topics=((TOPIC, 32),),
                               fsync="interval")
        async with trio.open_nursery() as nursery:
            running = await nursery.start(serve, options)
            state = running.server
            join = {"group_id": "g", "session_timeout_ms": 30000, "rebalance_timeout_ms": 2000,
                    "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                    "protocols": [{"name": "range", "metadata": b""}]}
            joined = await _call(state, _request(11, 7, join))
            if joined["error_code"] == 79:
                joined = await _call(state, _request(11, 7, {**join,
                                                             "member_id": joined["member_id"]}))
            member, generation = joined["member_id"], joined["generation_id"]
            await _call(state, _request(14, 5, {
                "group_id": "g", "generation_id": generation, "member_id": member,
                "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
                "assignments": [{"member_id": member, "assignment": b""}]}))
            rows = {"hb": _request(12, 4, {"group_id": "g", "generation_id": generation,
                                           "member_id": member, "group_instance_id": None})}
            for n in (1, 32):
                rows[f"oc{n}"] = _request(8, 8, {
                    "group_id": "g", "generation_id_or_member_epoch": generation,
                    "member_id": member, "group_instance_id": None,
                    "topics": [{"name": TOPIC, "partitions": [
                        {"partition_index": p, "committed_offset": 1000 + p,
                         "committed_leader_epoch": -1, "committed_metadata": ""}
                        for p in range(n)]}]})
            member_id = "bench-member-" + "0" * 10
            cgh_join = await _call(state, _request(68, 1, {
                "group_id": "cg", "member_id": member_id, "member_epoch": 0,
                "rebalance_timeout_ms": 30000, "subscribed_topic_names": [TOPIC],
                "topic_partitions": []}))
            cgh_epoch = cgh_join["member_epoch"]
            assert cgh_join["error_code"] == 0 and cgh_epoch > 0, cgh_join
            rows["cgh"] = _request(68, 1, {"group_id": "cg", "member_id": member_id,
                                           "member_epoch": cgh_epoch})
            for payload in rows.values():
                answer = wire.decode_response(int.from_bytes(payload[:2], "big"),
                                              int.from_bytes(payload[2:4], "big"),
                                              (await _serve_one(state, payload))[4:])[1]
                assert "error_code" not in answer or answer.error_code == 0, answer
            if args.profile:
                payload = rows[args.profile]
                profile = cProfile.Profile()
                profile.enable()
                for _ in range(args.requests):
                    await _serve_one(state, payload)
                profile.disable()
                pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            else:
                print(f"{'row':<6} {'median us':>10} {'min us':>8}   (CPU per request, "
                      f"{args.repeats} x {args.requests})")
                for name, payload in rows.items():
                    costs = []
                    for _ in range(args.repeats):
                        start = time.process_time()
                        for _ in range(args.requests):
                            await _serve_one(state, payload)
                        costs.append((time.process_time() - start) / args.requests * 1e6)
                        await trio.sleep(0)  # let the log's flusher run between repeats
                    print(f"{name:<6} {statistics.median(costs):>10.1f} {min(costs):>8.1f}")
            nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", choices=["hb", "oc1", "oc32", "cgh"])
    trio.run(_rows, parser.parse_args())


if __name__ == "__main__":
    main()
