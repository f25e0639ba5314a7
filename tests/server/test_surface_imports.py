"""The broker surface (what answers the first Metadata, ``startup_stages.load_broker_surface``)
is answered before every route is imported, and loads without modules the first Metadata
does not need (issue 33: exec to the first answered Metadata is import time): the config
store and every storage record type (DescribeConfigs' logger levels need only
``ConfigError``), the log cleaner's plan (the topic files need it only when the cleaner
asks). The import check runs in a child interpreter, so that its ``sys.modules`` is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import trio

import wire
from coordinator.server import app
from coordinator.server.apis import RouteTable
from coordinator.server.options import ServeOptions, build_options
from wire.framing import NEED_DATA, FrameReader

#: Loaded only once the coordinator loads (or the cleaner runs), never by the surface.
NOT_ON_THE_SURFACE = ("coordinator.configs.store", "storage.records",
                      "storage.log_cleaner_plan")

_CHILD = r'''
import json, sys
from coordinator.server.options import build_options
from coordinator.server.startup_stages import load_broker_surface

options = build_options({}, host="127.0.0.1", port=0, data_dir=sys.argv[1],
                        topics=(("t", 2),))
routes, store = load_broker_surface(options, 64)
names = sorted(routes.handlers)
store.files.close()
print(json.dumps({"handlers": names, "loaded": sorted(sys.modules)}))
'''


def test_the_broker_surface_loads_without_the_config_store_or_record_types(
        tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(out.stdout)
    assert result["handlers"] == [3, 10, 32]  # Metadata, FindCoordinator, DescribeConfigs
    assert "coordinator.broker.topic_files" in result["loaded"]  # disk topics were opened
    assert [m for m in NOT_ON_THE_SURFACE if m in result["loaded"]] == []


async def test_metadata_is_answered_before_every_route_is_imported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Metadata request that arrives before the broker surface is ready is answered once
    the surface is, not once every route is imported (it used to wait to learn whether it
    was a coordinator API: exec to the first Metadata then held every route's import)."""
    gate = threading.Event()
    real_import_deferred = app.import_deferred

    def held_import_deferred(options: ServeOptions | None = None) -> RouteTable:
        gate.wait(30)  # the rest of the routes: only once Metadata was answered
        return real_import_deferred(options)

    monkeypatch.setattr(app, "import_deferred", held_import_deferred)
    ports: list[int] = []
    listening = trio.Event()

    def on_listening(host: str, port: int, name: str | None) -> None:
        ports.append(port)
        listening.set()

    options = replace(build_options({}, host="127.0.0.1", port=0, data_dir=None,
                                    topics=(("t", 1),)), on_listening=on_listening)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app.serve, options)
            with trio.fail_after(30):
                await listening.wait()
            stream = await trio.open_tcp_stream("127.0.0.1", ports[0])
            await stream.send_all(wire.encode_request(3, 0, 7, "surface", {"topics": []}))
            reader = FrameReader()
            with trio.fail_after(10):  # held for 30 s if Metadata waits for every route
                while (payload := reader.next_frame()) is NEED_DATA:
                    reader.receive_data(await stream.receive_some(65536))
            correlation_id, answer = wire.decode_response(3, 0, bytes(payload))
            assert correlation_id == 7
            assert "t" in [t.name for t in answer.topics]
            gate.set()
            await stream.aclose()
            nursery.cancel_scope.cancel()
    finally:
        gate.set()
