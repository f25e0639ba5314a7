"""Answers while the server does its background storage work (issue 33).

    python tests/benchmarks/bench_background_work.py [--rounds 30] [--connections 200]
        [--rate 10] [--seconds 80] [--checkout DIR] [--topic-records N [--topic-keys K]]

A data directory is filled beforehand with ``--rounds`` rounds of offset commits to 1,000
groups x 10 partitions (30 rounds: 300,000 entries, 18 MB, 97 % of them overwritten), so
that the server's first check of its log, 60 s after it starts, writes a live snapshot
(``storage.snapshot_process``) and compacts the log (``storage.compaction_process``).
With ``--topic-records N``, the data directory instead holds a ``cleanup.policy=compact``
topic of N records over K keys (10,000; 1 MiB segments), which the log cleaner cleans as the
server starts (``storage.log_cleaner_process``). Meanwhile ``--connections`` clients
commit an offset ``--rate`` times a second each (OffsetCommit v2, a simple-consumer group
per connection), one request in flight per connection, sent on a steady schedule, through
``--seconds`` from the start (the check at 60 s included). Reported: p50 / p99 / max
latency (send to answer) in 5 s windows by when the request was sent, over the whole run,
and the server's VmHWM. ``--checkout DIR`` runs the server from another checkout (the one
before, for a side-by-side run): the clients are this checkout's.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

from bench_brokers import Broker, Session, free_port
from scale_fleet import Connection, drive, pct

from storage.log import Log
from storage.records import OffsetCommitKey, OffsetCommitValue, Record
from wire import decode_response, encode_request

COMMIT = 8
COORDINATOR_LOAD_IN_PROGRESS = 14


class Committer(Connection):
    """A simple consumer committing one partition at a steady rate."""

    def __init__(self, group: str, port: int, rate: float) -> None:
        super().__init__(group, port)
        self.rate = rate
        self.next = {COMMIT: time.monotonic() + random.uniform(0, 1 / rate)}

    def request(self, key: int) -> bytes:
        self.corr += 1
        body = {"group_id": self.group, "generation_id_or_member_epoch": -1, "member_id": "",
                "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                    {"partition_index": 0, "committed_offset": self.corr,
                     "committed_metadata": ""}]}]}
        return encode_request(COMMIT, 2, self.corr, "bench-background", body)

    def period(self, key: int) -> float:
        return 1 / self.rate

    def read(self, key: int, payload: bytes, errors: dict[str, int]) -> None:
        _, response = decode_response(COMMIT, 2, payload)
        for topic in response.topics:
            for partition in topic.partitions:
                if partition.error_code:
                    name = str(partition.error_code)
                    errors[name] = errors.get(name, 0) + 1


def prefill(directory: str, rounds: int) -> int:
    """Write ``rounds`` rounds of commits to 1,000 groups x 10 partitions; bytes written."""
    with Log.open(directory, fsync="never") as log:
        for r in range(rounds):
            log.append([Record(OffsetCommitKey(f"pre-{g}", "t", p), OffsetCommitValue(r * 10 + p))
                        for g in range(1000) for p in range(10)])
    return _log_bytes(directory)


def prefill_topic(directory: str, records: int, keys: int = 10_000) -> int:
    """A compacted topic "c" of ``records`` records over ``keys`` keys, in batches of 100;
    bytes written."""
    from bench_topic_compaction import keyed_batch

    from coordinator.broker.batches import validate_produced_batch
    from coordinator.broker.topic_files import TopicFiles
    from coordinator.broker.topics import TopicStore

    store = TopicStore()
    store.restore(TopicFiles(directory, "never", "fail"))
    store.create_topic("c", 1, {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)})
    rng = random.Random(7)
    for base in range(0, records, 100):
        batch = keyed_batch([rng.randrange(keys) for _ in range(min(100, records - base))],
                            base)
        store.append("c", 0, batch, validate_produced_batch(batch, 9, 1 << 20))
    assert store.files is not None
    store.files.close()
    return _log_bytes(os.path.join(directory, "topics"))


def _log_bytes(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(root, n)) for root, _, names in os.walk(directory)
               for n in names if n.endswith(".log"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=80.0)
    parser.add_argument("--checkout", help="run the server from this checkout")
    parser.add_argument("--topic-records", type=int, default=0,
                        help="prefill a compacted topic of this many records instead")
    parser.add_argument("--topic-keys", type=int, default=10_000,
                        help="over this many keys")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kcoord-bench-background-") as data_dir:
        if args.topic_records:
            size = prefill_topic(data_dir, args.topic_records, args.topic_keys)
            storage = ["--config", "log.cleaner.backoff.ms=1000"]
        else:
            size = prefill(data_dir, args.rounds)
            storage = ["--topic-storage", "memory"]
        port = free_port()
        broker = Broker("kcoord", [sys.executable, "-m", "coordinator", "serve", "--port",
                                   str(port), "--data-dir", data_dir, *storage,
                                   "--topic", "t:1"], port, checkout=args.checkout)
        started = time.monotonic()
        broker.start()
        try:
            session = Session(port)
            while session.call(16, 0, {}).error_code == COORDINATOR_LOAD_IN_PROGRESS:
                time.sleep(0.05)
            members = [Committer(f"live-{i}", port, args.rate)
                       for i in range(args.connections)]
            errors: dict[str, int] = {}
            timed = drive(members, started + args.seconds, errors)[COMMIT]
            memory = broker.memory_mib()
        finally:
            broker.stop()
        after = _log_bytes(os.path.join(data_dir, "topics") if args.topic_records
                           else data_dir)
    what = (f"a compacted topic of {args.topic_records} records over {args.topic_keys} keys"
            if args.topic_records
            else f"{args.rounds} rounds")
    print(f"# {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC · load average "
          f"{os.getloadavg()[0]:.1f} · prefilled {size / 2**20:.1f} MiB "
          f"({what}) "
          f"· {args.connections} connections x {args.rate:g}/s · server from "
          f"{args.checkout or 'this checkout'}")
    print("\n| sent (s after exec) | answered | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for start in range(0, int(args.seconds), 5):
        window = [lat for sent, lat in timed if start <= sent - started < start + 5]
        if window:
            print(f"| {start}-{start + 5} | {len(window)} | {pct(window, 0.5):.2f} | "
                  f"{pct(window, 0.99):.2f} | {max(window) * 1000:.1f} |")
    every = [lat for _, lat in timed]
    print(f"| **all** | {len(every)} | {pct(every, 0.5):.2f} | {pct(every, 0.99):.2f} | "
          f"{max(every) * 1000:.1f} |")
    print(f"\nerrors: {errors or 'none'}; server VmRSS / VmHWM {memory['VmRSS']:.1f} / "
          f"{memory['VmHWM']:.1f} MiB; the {'topic' if args.topic_records else 'log'}'s "
          f"segments {size / 2**20:.1f} MiB before, "
          f"{after / 2**20:.1f} MiB at the end (compacted if much smaller)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
