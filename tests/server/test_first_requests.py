"""Each API's codec module (``wire.apis.<module>``) is imported by the first request of
that API, not at startup (memory and startup time), and that first request is answered.

The server runs in a child interpreter so that its ``sys.modules`` is its own: the frames
are encoded here, sent raw by the child, and the answers decoded here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import wire
from coordinator.server.apis import SERVED_API_KEYS
from wire.registry import VERSION_TABLE

#: The APIs the server answers: wire also decodes APIs no route serves yet (their first
#: request closes the connection, as an unknown key's does).
ROUTED = [api for api in VERSION_TABLE if api.api_key in SERVED_API_KEYS]

#: Run by the child: start a server (memory sink), note which codec modules it loaded,
#: then send each frame and report the modules loaded before and after its answer.
_CHILD = r'''
import json, sys
import trio
from coordinator.server.app import serve
from coordinator.server.options import build_options
from wire.framing import NEED_DATA, FrameReader

requests = json.load(sys.stdin)

def codecs():
    return sorted(m for m in sys.modules if m.startswith("wire.apis."))

async def main():
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=None, topics=(("t", 1),))
    out = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            running = await nursery.start(serve, options)
            loaded = codecs()
            stream = await trio.open_tcp_stream("127.0.0.1", running.port)
            reader = FrameReader()
            for key, frame in requests:
                before = codecs()
                await stream.send_all(bytes.fromhex(frame))
                while (payload := reader.next_frame()) is NEED_DATA:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise SystemExit(f"closed at API key {key}")
                    reader.receive_data(data)
                out.append([key, before, codecs(), payload.hex()])
            await stream.aclose()
            nursery.cancel_scope.cancel()
    print(json.dumps({"loaded": loaded, "answers": out}))

trio.run(main)
'''

#: Bodies beyond the schema defaults: Produce with acks=0 would get no answer.
_BODIES = {0: {"acks": 1, "timeout_ms": 1000}}


def test_each_api_codec_loads_on_its_first_request_which_is_answered() -> None:
    requests = []
    for correlation_id, api in enumerate(ROUTED, start=1):
        frame = wire.encode_request(api.api_key, api.max_version, correlation_id, "first",
                                    _BODIES.get(api.api_key, {}))
        requests.append([api.api_key, frame.hex()])
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(requests),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    loaded_at_start = set(report["loaded"])
    modules = {api.api_key: f"wire.apis.{api.module}" for api in ROUTED}
    lazy = set(modules.values()) - loaded_at_start
    # The fast paths' three (Heartbeat, OffsetCommit, ConsumerGroupHeartbeat) load at start.
    assert len(lazy) >= len(modules) - 4, sorted(loaded_at_start)
    answered = []
    for correlation_id, (key, before, after, payload) in enumerate(report["answers"], start=1):
        module = modules[key]
        if module in lazy:
            assert module not in before, f"{module} was loaded before its first request"
        assert module in after
        api = next(a for a in ROUTED if a.api_key == key)
        got_id, _ = wire.decode_response(key, api.max_version, bytes.fromhex(payload))
        assert got_id == correlation_id
        answered.append(key)
    assert answered == [api.api_key for api in ROUTED]
