"""Capture real Kafka clients' request frames as golden fixtures for tests/wire.

README: re-run from the repository root with
    . .venv/bin/activate && python tests/wire/capture/capture_broker.py
optionally with ``--clients kafka-python,aiokafka,confluent-kafka,kcat`` (a subset)
(needs kafka-python, ``pip install confluent-kafka aiokafka`` and ``apt-get install -y kcat``).
It rewrites ``tests/wire/fixtures/<client>.py``; the tests only read those files and never
need a client. Regenerate only on purpose (new client version, new API): then re-check
the explicit field assertions of tests/wire/test_golden_frames.py.

How it works: a small threaded TCP server on 127.0.0.1 (port 0) decodes every request with
``wire`` and answers with ``wire.encode_response`` just enough for each client to go
subscribe -> join -> sync -> fetch -> commit -> leave (one broker, node 1 = itself; one
topic ``t1`` with one partition holding 3 records; a toy one-member group per group id).
Every raw request frame (size prefix included) is recorded with the name of the client
being driven. Each client runs in its own subprocess (kcat as itself) with a hard timeout.
One frame per (api, version) per client is kept and written out with one hex chunk per
field and a comment naming the field and its value (pyca/tls style).

The pieces are sibling modules this script imports: capture_server.py (the broker),
capture_clients.py (the client scripts and command lines), capture_output.py (the
field-by-field annotation and the fixture modules).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from capture_clients import client_runs, run_client  # noqa: E402
from capture_output import client_version, module_name, render, select  # noqa: E402
from capture_server import CaptureServer  # noqa: E402

import wire  # noqa: E402

FIXTURES = REPO / "tests" / "wire" / "fixtures"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="kafka-python,aiokafka,confluent-kafka,kcat")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    args = parser.parse_args()
    names = args.clients.split(",")

    server = CaptureServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    bootstrap = f"127.0.0.1:{server.state.port}"
    try:
        for run in client_runs(bootstrap, names):
            run_client(server.state, run)
    finally:
        server.shutdown()
        server.server_close()

    state = server.state
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        frames = [c for c in state.frames if c.client == name]
        chosen = select(frames)
        path = args.out / f"{module_name(name)}.py"
        path.write_text(render(name, client_version(name), chosen))
        seen = ", ".join(
            f"{wire.lookup(c.api_key).name if wire.lookup(c.api_key) else c.api_key}"
            f" v{c.api_version}" for c in chosen
        )
        print(f"{name}: {len(frames)} frames, {len(chosen)} kept -> {path}\n    {seen}")
    for err in state.errors:
        print("ERROR", err)
    return 1 if state.errors else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
