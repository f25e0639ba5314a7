"""The log cleaner of a compacted topic while a producer writes (issue 30 item 2).

    python tests/benchmarks/bench_topic_compaction.py [--records 1000000] [--keys 10000]
        [--in-thread]

(``bench_compaction.py`` measures the coordinator's own metadata-log compaction.) In one
process, on one Trio loop, as the server runs them: a producer appends batches of 100
records over ``--keys`` keys to a ``cleanup.policy=compact`` partition (1 MiB segments,
``--fsync interval``) until ``--records`` are written; the cleaner (``log_cleaning``'s
manager: plan on the loop, clean in a child process a worker thread waits for, apply on the
loop; ``--in-thread``: clean in the worker thread itself, as before issue 33) runs round
after round meanwhile; a consumer follows the partition from offset 0 as a Fetch would
(``PartitionLog.read``) and checks that every batch it gets starts after the last offset it
saw; a ticker measures how late a 1 ms sleep wakes (the stall a connection would see).
Reported: wall time, cleaner rounds and their summed time, records and bytes left, peak
RSS (VmHWM), the longest and p99 loop stall, and offsets seen going backwards (must be 0).
A final check reads the partition from 0 and compares each key's value with the last one
written. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kafka.record.default_records import (  # noqa: E402
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
)

from coordinator.broker.batches import validate_produced_batch  # noqa: E402
from coordinator.broker.log_cleaning import LogCleanerManager  # noqa: E402
from coordinator.broker.topic_files import TopicFiles  # noqa: E402
from coordinator.broker.topics import TopicStore  # noqa: E402
from storage.log_cleaner import write_cleaned  # noqa: E402
from storage.log_cleaner_process import write_cleaned_in_child  # noqa: E402

BATCH = 100


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def keyed_batch(keys: list[int], serial: int) -> bytes:
    """A batch of one record per key in ``keys`` ("key-K" = "value-K-N", N counting from
    ``serial``), timestamped by ``serial``."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    for i, key in enumerate(keys):
        builder.append(i, timestamp=1_700_000_000_000 + serial, key=b"key-%d" % key,
                       value=b"value-%d-%d" % (key, serial + i), headers=[])
    return bytes(builder.build())


async def run(records: int, keys: int, data_dir: str, with_cleaner: bool = True,
              in_thread: bool = False) -> dict[str, float]:
    store = TopicStore()
    store.restore(TopicFiles(data_dir, "interval", "fail"))
    store.create_topic("c", 1, {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)})
    partition = store.partition("c", 0)
    assert partition is not None
    manager = LogCleanerManager(store, write=write_cleaned if in_thread else write_cleaned_in_child)
    rng = random.Random(7)
    latest: dict[bytes, bytes] = {}
    stalls: list[float] = []
    on_loop: list[float] = []  # the cleaner's own steps on the event loop (plan, apply)
    backwards = 0
    clean_seconds = 0.0
    done = trio.Event()

    # The batches are built first (kafka-python's builder is slow): the loop only appends.
    prepared = []
    for written in range(0, records, BATCH):
        chosen = [rng.randrange(keys) for _ in range(min(BATCH, records - written))]
        prepared.append(keyed_batch(chosen, written))
        for i, key in enumerate(chosen):
            latest[b"key-%d" % key] = b"value-%d-%d" % (key, written + i)
    rss_before = _status("VmRSS")
    started = time.perf_counter()

    async def producer() -> None:
        for batch in prepared:
            store.append("c", 0, batch, validate_produced_batch(batch, 9, 1 << 20))
            await trio.sleep(0)
        done.set()

    async def cleaner() -> None:
        nonlocal clean_seconds
        while True:
            t0 = time.perf_counter()
            job = manager.grab_filthiest(int(time.time() * 1000), {})
            on_loop.append(time.perf_counter() - t0)
            if job is not None:
                result = await trio.to_thread.run_sync(manager.clean, job)
                t1 = time.perf_counter()
                manager.apply(job, result)
                on_loop.append(time.perf_counter() - t1)
                clean_seconds += time.perf_counter() - t0
            elif done.is_set():
                return
            else:
                await trio.sleep(0.05)

    async def consumer() -> None:
        nonlocal backwards
        position = 0
        while True:
            batches = await partition.read(position, 1 << 20, True, partition.high_watermark)
            for data in batches:
                base = int.from_bytes(data[:8], "big", signed=True)
                last = base + int.from_bytes(data[23:27], "big", signed=True)
                if last < position:
                    backwards += 1
                position = max(position, last + 1)
            if not batches:
                if done.is_set() and position >= partition.high_watermark:
                    return
                await trio.sleep(0.01)
            await trio.sleep(0)

    async def ticker() -> None:
        while not done.is_set():
            t0 = trio.current_time()
            await trio.sleep(0.001)
            stalls.append(trio.current_time() - t0 - 0.001)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(producer)
        if with_cleaner:
            nursery.start_soon(cleaner)
        nursery.start_soon(consumer)
        nursery.start_soon(ticker)
    wall = time.perf_counter() - started
    # the final state: each key's last written value, nothing else below the active segment
    seen: dict[bytes, bytes] = {}
    for stored in partition.batches:
        for record in DefaultRecordBatch(stored.data):
            seen[record.key] = record.value
    assert seen == latest, "a key's latest value is missing or wrong"
    rounds_before = manager.rounds
    if with_cleaner:  # the last round, once the producer stopped (the active segment stays)
        job = manager.grab_filthiest(int(time.time() * 1000), {})
        if job is not None:
            manager.apply(job, manager.clean(job))
    count = sum(len(list(DefaultRecordBatch(b.data))) for b in partition.batches)
    stalls.sort()
    assert store.files is not None
    store.files.close()
    return {
        "records": records, "keys": keys, "in_thread": in_thread, "wall_s": round(wall, 2),
        "cleaner_rounds": rounds_before, "rss_before_mib": round(rss_before / 2**20, 1),
        "cleaning_s": round(clean_seconds, 2),
        "records_left": count, "bytes_left": partition.size_bytes,
        "peak_rss_mib": round(_status("VmHWM") / 2**20, 1),
        "max_stall_ms": round(1000 * stalls[-1], 1) if stalls else 0.0,
        "p99_stall_ms": round(1000 * stalls[int(len(stalls) * 0.99)], 1) if stalls else 0.0,
        "cleaner_on_loop_max_ms": round(1000 * max(on_loop, default=0.0), 1),
        "offsets_backwards": backwards,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--no-cleaner", action="store_true",
                        help="the same run without the cleaner (the stall baseline)")
    parser.add_argument("--in-thread", action="store_true",
                        help="clean in the worker thread, not a child process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        row = trio.run(run, args.records, args.keys, data_dir, not args.no_cleaner,
                       args.in_thread)
    print(json.dumps(row))
    if row["offsets_backwards"]:
        raise SystemExit("a consumer saw an offset go backwards")


if __name__ == "__main__":
    main()
