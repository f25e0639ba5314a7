"""Where a kcoord server's startup memory and CPU go (issue 14 item 3).

    python tests/benchmarks/bench_startup_memory.py [--runs 15] [--checkout DIR ...]

1. VmRSS by import stage: a fresh interpreter imports the modules a running ``kcoord serve``
   has loaded (the list and order read from ``python -X importtime -m coordinator serve``),
   group by group in the server's order, and prints VmRSS after each group; beside it
   ``python -c pass`` and ``python -c "import trio"``.
2. CPU before the listener is bound: parse the ``serve`` arguments, validate the options and
   bind (``time.process_time``, so less sensitive to a busy machine than wall time); median
   and min of ``--runs`` fresh interpreters per checkout, the checkouts alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: (label, prefixes of module names), in the server's import order; a module goes to the
#: first group whose prefix it has (the early path's modules are named one by one, and
#: match by their exact names: ``coordinator.server.apis``'s route modules come later).
GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("coordinator.cli (argparse, dataclasses, logging, typing)", ("coordinator.cli",)),
    ("the early path (config, options, wire registry, early bind)",
     ("coordinator.config", "coordinator.server.options", "wire.constants",
      "coordinator.server.apis", "coordinator.server.apis.api_versions",
      "coordinator.server.route", "coordinator.server.early")),
    ("ssl (imported by trio)", ("ssl",)),
    ("the rest of trio", ("trio",)),
    ("construct", ("construct",)),
    ("wire codecs", ("wire.",)),
    ("storage", ("storage.",)),
    ("coordinator.core", ("coordinator.core",)),
    ("coordinator.txn", ("coordinator.txn",)),
    ("coordinator.broker", ("coordinator.broker",)),
    ("coordinator.server", ("coordinator.server.",)),
    ("anything else", ("",)),
]

_EARLY = 1  # the index of the early path's group

_STAGES = r'''
import importlib, json, re, sys
def rss():
    return int(re.search(r"VmRSS:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
rows = [["interpreter + site", rss()]]
for label, names in json.loads(sys.stdin.read()):
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # another platform's module named in importtime's output
            pass
    rows.append([label, rss()])
print(json.dumps(rows))
'''

_PREBIND = r'''
import time
from coordinator.cli import _parser
from coordinator.server.early import bind_listeners
from coordinator.server.options import build_options
_parser().parse_args(["serve", "--port", "0"])
build_options({}, port=0, data_dir=None)
bind_listeners(0, "127.0.0.1")
print(time.process_time() * 1000)
'''


def _env(checkout: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": checkout}


def served_modules(checkout: str, seconds: float = 3.0) -> list[str]:
    """The modules a ``kcoord serve`` has imported ``seconds`` after its start, in order."""
    with tempfile.TemporaryDirectory(prefix="kcoord-startup-memory-") as data:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "coordinator", "serve", "--port", "0",
             "--data-dir", os.path.join(data, "d"), "--log-level", "warning"],
            cwd=checkout, env=_env(checkout), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
        )
        time.sleep(seconds)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \| *(\S+)$", err, re.MULTILINE)
    return list(dict.fromkeys(names))


def rss_by_stage(checkout: str) -> list[tuple[str, float]]:
    modules = served_modules(checkout)
    groups: list[tuple[str, list[str]]] = [(label, []) for label, _ in GROUPS]
    for name in modules:
        for (_, prefixes), (_, members) in zip(GROUPS, groups, strict=True):
            exact = prefixes is GROUPS[_EARLY][1]
            if any(name == p or (not exact and name.startswith(p)) for p in prefixes):
                members.append(name)
                break
    done = subprocess.run([sys.executable, "-c", _STAGES], input=json.dumps(groups),
                          cwd=checkout, env=_env(checkout), capture_output=True, text=True,
                          check=True)
    return [(label, mib) for label, mib in json.loads(done.stdout)]


def bare_rss(code: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', "
         "open('/proc/self/status').read()).group(1))"],
        capture_output=True, text=True, check=True)
    return int(done.stdout) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--checkout", action="append", default=[], metavar="DIR",
                        help="also measure the CPU before the bind of this checkout")
    args = parser.parse_args()
    bytecode = "not written (PYTHONDONTWRITEBYTECODE)" if sys.flags.dont_write_bytecode else "kept"
    print(f"# load average {os.getloadavg()[0]:.1f}; kcoord bytecode {bytecode}")
    print(f"\npython -c pass: {bare_rss('pass'):.1f} MiB; "
          f"python -c 'import trio': {bare_rss('import trio'):.1f} MiB\n")
    print("| stage | + MiB | VmRSS MiB |\n|---|---|---|")
    previous = None
    for label, mib in rss_by_stage(REPO):
        added = "" if previous is None else f"{mib - previous:.1f}"
        print(f"| {label} | {added} | {mib:.1f} |")
        previous = mib
    checkouts = [REPO, *args.checkout]
    cpu: dict[str, list[float]] = {c: [] for c in checkouts}
    for _ in range(args.runs):
        for checkout in checkouts:
            done = subprocess.run([sys.executable, "-c", _PREBIND], cwd=checkout,
                                  env=_env(checkout), capture_output=True, text=True,
                                  check=True)
            cpu[checkout].append(float(done.stdout))
    print("\n| CPU from exec until the listener is bound | median | min |\n|---|---|---|")
    for checkout, values in cpu.items():
        print(f"| {checkout} | {statistics.median(values):.1f} ms | {min(values):.1f} ms |")


if __name__ == "__main__":
    main()
