"""Segment summaries (``storage/segment_summary.py``, FORMAT.md section 10): open uses a
closed segment's summary instead of checking its entries only when it describes exactly the
segment's bytes; anything else is checked entry by entry, so corruption is found, refused
and truncated exactly as without summaries. Real files throughout; a spy on the per-entry
check (the real function still runs) tells which segments open walked."""

from __future__ import annotations

import errno
import os
import shutil
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from crc32c import crc32c

from storage import recovery
from storage.batch import EncodedBatch
from storage.compaction import CompactionPolicy, compact
from storage.errors import CorruptLogError
from storage.fs import FaultPlan, FaultyFileSystem, SimulatedCrash
from storage.live_index import LiveIndex
from storage.log import Log
from storage.record_codec import encode_record
from storage.records import (
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
    TransactionStateKey,
    TransactionStateValue,
)
from storage.segment import HEADER_SIZE, encode_entry
from storage.segment_summary import SUMMARY_VERSION, decode_summary

SEGMENT_BYTES = 400


def commit(i: int, partition: int = 0) -> Record:
    return Record(OffsetCommitKey("g", "t", partition), OffsetCommitValue(i, 1, "", i))


def txn(producer_id: int) -> Record:
    return Record(
        TransactionStateKey("tx"),
        TransactionStateValue(producer_id, 0, 60_000, 0, (), 0, 0, -1, -1, 0),
    )


EVENT = Record(RebalanceEventKey("g"), RebalanceEventValue("rebalance_start", 1, 1))


def history(n: int = 40) -> list[Record]:
    out: list[Record] = []
    for i in range(n):
        out.append(commit(i, i % 3))
        if i % 7 == 0:
            out.append(txn(i))
        if i % 5 == 0:
            out.append(EVENT)
        if i % 11 == 0:
            out.append(Record(OffsetCommitKey("g", "t", 1), None))
    return out


def write(directory: str, records: list[Record]) -> None:
    with Log.open(directory, segment_bytes=SEGMENT_BYTES, fsync="never") as log:
        for i in range(0, len(records), 3):
            log.append(records[i : i + 3])


def summaries(directory: str) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".summary"))


def drop_summaries(directory: str) -> None:
    for name in summaries(directory):
        os.unlink(os.path.join(directory, name))


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the segments open checked entry by entry (the real check runs)."""
    names: list[str] = []
    real = recovery.index_range

    def spy(fs: Any, path: str, *args: Any, **kwargs: Any) -> tuple[int, int, int]:
        names.append(os.path.basename(path))
        return real(fs, path, *args, **kwargs)

    monkeypatch.setattr(recovery, "index_range", spy)
    yield names


def opened(directory: str, **options: Any) -> tuple[list[tuple[int, int, int]], Any, list[Record]]:
    """(segments, what open's live index holds, the live replay) of ``directory``."""
    with Log.open(directory, segment_bytes=SEGMENT_BYTES, live_index=True, **options) as log:
        index = log._live_index
        assert index is not None
        described = _describe(index)
        segments = [(s.base, s.size, s.count) for s in log.segments]
        return segments, described, list(log.replay_live())


def _describe(index: LiveIndex) -> tuple[Any, ...]:
    return (dict(index.newest), sorted(index.kept), index.event_bytes, dict(index.covered),
            index.complete)


def segment_names(directory: str) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".log"))


def test_rolls_write_summaries_and_open_uses_them(data_dir: str, scanned: list[str]) -> None:
    write(data_dir, history())
    names = segment_names(data_dir)
    assert len(names) > 3
    # Every closed segment got its summary when the log rolled; the active one has none.
    assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]
    with_summaries = opened(data_dir)
    assert scanned == names[-1:]  # only the active segment was checked entry by entry
    drop_summaries(data_dir)
    scanned.clear()
    without = opened(data_dir)
    assert scanned == names
    assert with_summaries == without
    # The open without summaries wrote them (an old log is fast on its second start).
    assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]
    scanned.clear()
    assert opened(data_dir) == without
    assert scanned == names[-1:]


def test_full_replay_and_counts_with_summaries(data_dir: str) -> None:
    records = history()
    write(data_dir, records)
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert list(log.replay()) == records
        assert log.next_index == len(records)
        stats = (log.live_bytes, log.event_bytes)
    drop_summaries(data_dir)
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert list(log.replay()) == records
        assert (log.live_bytes, log.event_bytes) == stats


def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x40]))


def _refusal(directory: str) -> tuple[str, int, str]:
    """How opening ``directory`` refuses it: the file's name, the offset and the message
    (with the directory left out, so two directories' refusals compare equal)."""
    with pytest.raises(CorruptLogError) as info:
        Log.open(directory, segment_bytes=SEGMENT_BYTES, live_index=True)
    return (os.path.basename(info.value.path), info.value.offset,
            str(info.value).replace(directory, ""))


@pytest.mark.parametrize("where", [HEADER_SIZE + 1, HEADER_SIZE + 9, -3, 2])
def test_a_flipped_byte_in_a_summarised_segment_is_refused_as_without(
    tmp_path: Any, where: int
) -> None:
    plain = os.path.join(str(tmp_path), "plain")
    summarised = os.path.join(str(tmp_path), "summarised")
    write(summarised, history())
    shutil.copytree(summarised, plain)
    drop_summaries(plain)
    errors = []
    for directory in (summarised, plain):
        name = segment_names(directory)[1]
        assert os.path.exists(os.path.join(summarised, name + ".summary"))
        path = os.path.join(directory, name)
        _flip(path, where if where >= 0 else os.path.getsize(path) + where)
        errors.append(_refusal(directory))
    assert errors[0] == errors[1]


def test_bytes_changed_on_disk_before_the_roll_are_not_summarised_as_good(
    tmp_path: Any,
) -> None:
    """A byte of the active segment flipped on disk while the log runs: the summary the
    roll writes has the CRC-32 of what was appended, not of the file, so the next open
    checks that segment entry by entry and refuses it exactly as without summaries."""
    errors = []
    for keep in (True, False):
        directory = os.path.join(str(tmp_path), f"keep-{keep}")
        with Log.open(directory, segment_bytes=SEGMENT_BYTES, fsync="never") as log:
            log.append([commit(i) for i in range(3)])
            _flip(log.segments[-1].path, HEADER_SIZE + 20)
            while len(log.segments) == 1:
                log.append([commit(9)])
        if keep:
            assert summaries(directory) == [segment_names(directory)[0] + ".summary"]
        else:
            drop_summaries(directory)
        errors.append(_refusal(directory))
    assert errors[0] == errors[1]


def test_recover_truncate_with_a_stale_summary_repairs_as_without(tmp_path: Any) -> None:
    plain = os.path.join(str(tmp_path), "plain")
    summarised = os.path.join(str(tmp_path), "summarised")
    write(summarised, history())
    shutil.copytree(summarised, plain)
    drop_summaries(plain)
    results = []
    for directory in (summarised, plain):
        path = os.path.join(directory, segment_names(directory)[2])
        _flip(path, HEADER_SIZE + 30)
        with Log.open(directory, segment_bytes=SEGMENT_BYTES, recover="truncate",
                      live_index=True) as log:
            actions = [(os.path.basename(a.path), a.offset, a.dropped_bytes, a.reason,
                        a.entries_kept) for a in log.recovery]
            results.append((actions, list(log.replay_live()), list(log.replay())))
    assert results[0] == results[1]
    assert results[0][0]  # something was repaired


def _rewrite(path: str, edit: Any) -> None:
    """Apply ``edit`` to a summary's body and give it a valid CRC-32C again."""
    with open(path, "rb") as f:
        body = bytearray(f.read()[:-4])
    edit(body)
    with open(path, "wb") as f:
        f.write(bytes(body) + struct.pack(">I", crc32c(bytes(body))))


def _overwrite(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _other_segments_summary(directory: str, path: str) -> None:
    names = summaries(directory)
    shutil.copyfile(os.path.join(directory, names[0]), path)


BAD_SUMMARIES: dict[str, Any] = {
    "flipped byte": lambda d, p: _flip(p, 20),
    "flipped key byte": lambda d, p: _flip(p, os.path.getsize(p) - 8),
    "truncated": lambda d, p: os.truncate(p, os.path.getsize(p) - 5),
    "cut to its header": lambda d, p: os.truncate(p, 12),
    "empty": lambda d, p: os.truncate(p, 0),
    "garbage": lambda d, p: _overwrite(p, bytes(range(256)) * 2),
    "newer version": lambda d, p: _rewrite(
        p, lambda b: b.__setitem__(slice(8, 10), struct.pack(">H", SUMMARY_VERSION + 1))),
    "another size": lambda d, p: _rewrite(
        p, lambda b: b.__setitem__(slice(20, 28), struct.pack(">Q", 100))),
    "another CRC-32": lambda d, p: _rewrite(
        p, lambda b: b.__setitem__(slice(28, 32), struct.pack(">I", 12345))),
    "another segment's": _other_segments_summary,
    "a directory": lambda d, p: (os.unlink(p), os.mkdir(p)),
}


@pytest.mark.parametrize("damage", sorted(BAD_SUMMARIES))
def test_a_bad_summary_is_ignored_and_rewritten(
    data_dir: str, scanned: list[str], damage: str
) -> None:
    write(data_dir, history())
    expected = opened(data_dir)
    name = segment_names(data_dir)[1]
    path = os.path.join(data_dir, name + ".summary")
    BAD_SUMMARIES[damage](data_dir, path)
    scanned.clear()
    assert opened(data_dir) == expected
    assert name in scanned  # checked entry by entry instead
    if damage != "a directory":  # a summary that cannot be replaced stays ignored
        with open(path, "rb") as f:
            rewritten = decode_summary(f.read())
        assert rewritten is not None and rewritten.size == expected[0][1][1]


def test_a_stale_summary_of_a_segment_rewritten_in_place_is_ignored(
    data_dir: str, scanned: list[str]
) -> None:
    """Same size, same framing, another value: the segment's CRC-32 tells them apart."""
    write(data_dir, [commit(i) for i in range(30)])
    name = segment_names(data_dir)[0]
    path = os.path.join(data_dir, name)
    with open(path, "rb") as f:
        data = f.read()
    old = encode_entry(*encode_record(commit(0)))
    new = encode_entry(*encode_record(Record(commit(0).key, OffsetCommitValue(9, 1, "", 0))))
    assert len(old) == len(new) and data.startswith(old, HEADER_SIZE)
    with open(path, "r+b") as f:
        f.seek(HEADER_SIZE)
        f.write(new)
    scanned.clear()
    _, _, live = opened(data_dir)
    assert name in scanned
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        first = next(iter(log.replay()))
        assert first == Record(commit(0).key, OffsetCommitValue(9, 1, "", 0))
    assert live == [commit(29)]


def test_the_active_segment_is_always_checked_entry_by_entry(
    data_dir: str, scanned: list[str]
) -> None:
    """A summary beside the last segment (its next segment was deleted) is not used: a
    torn tail after it is truncated as always."""
    write(data_dir, history())
    names = segment_names(data_dir)
    os.unlink(os.path.join(data_dir, names[-1]))
    last = os.path.join(data_dir, names[-2])
    assert os.path.exists(last + ".summary")
    with open(last, "ab") as f:
        f.write(encode_entry(*encode_record(commit(99)))[:-2])
    scanned.clear()
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert "torn tail" in log.recovery[0].reason
        # checked, then summarised again after the repair; the others' summaries were used
        assert set(scanned) == {names[-2]}


def test_orphan_and_temporary_summaries_are_removed(data_dir: str) -> None:
    write(data_dir, history())
    orphan = os.path.join(data_dir, f"{10**6:020d}.log.summary")
    temp = os.path.join(data_dir, segment_names(data_dir)[0] + ".summary.new")
    for path in (orphan, temp):
        with open(path, "wb") as f:
            f.write(b"left behind")
    expected_names = summaries(data_dir)
    expected_names.remove(os.path.basename(orphan))
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert list(log.replay()) == history()
    assert summaries(data_dir) == expected_names
    assert not os.path.exists(temp)


def test_retention_and_compaction_delete_their_segments_summaries(data_dir: str) -> None:
    write(data_dir, history())
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES, live_index=True) as log:
        list(log.replay_live())
        assert compact(log, CompactionPolicy(tombstone_retention_ms=10**12)) is not None
        names = segment_names(data_dir)
        # The compacted segment has its summary, the replaced ones' are gone.
        assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]
        log.append([commit(100)])
        log.roll()
        doomed = log.delete_oldest(1)
        assert not os.path.exists(doomed[0].path + ".summary")
    names = segment_names(data_dir)
    assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]
    with_summaries = opened(data_dir)
    drop_summaries(data_dir)
    assert opened(data_dir) == with_summaries


def test_compaction_output_summary_is_used(tmp_path: Any, scanned: list[str]) -> None:
    data_dir = os.path.join(str(tmp_path), "data")
    write(data_dir, history())
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert compact(log, CompactionPolicy(tombstone_retention_ms=10**12)) is not None
    copy = os.path.join(str(tmp_path), "copy")
    shutil.copytree(data_dir, copy)
    drop_summaries(copy)
    scanned.clear()
    with_summary = opened(data_dir)
    assert scanned == segment_names(data_dir)[-1:]
    assert with_summary[1:] == opened(copy)[1:]


def test_batches_without_keys_get_their_summary_at_the_next_open(
    data_dir: str, scanned: list[str]
) -> None:
    """A batch written without its keys (durable topic partitions write those) leaves the
    segment unsummarised at its roll; the next open checks it and summarises it."""
    entry = encode_entry(*encode_record(commit(1)))
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES, fsync="never") as log:
        for _ in range(12):
            log.write_batch(EncodedBatch(entry, 1))
    names = segment_names(data_dir)
    assert len(names) > 1 and summaries(data_dir) == []
    scanned.clear()
    opened(data_dir)
    assert scanned == names
    assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]


def test_failed_summary_writes_are_ignored(data_dir: str) -> None:
    """ENOSPC on every summary write at a roll: appends go on, nothing is lost, no
    temporary file stays, and the next open writes the summaries."""
    fs = FaultyFileSystem()
    records = history()
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES, fsync="never", fs=fs) as log:
        for i in range(0, len(records), 3):
            # a roll writes the new segment's header (write 0), then the closed segment's
            # summary (write 1), then the batch; an append without a roll writes once
            fs.arm(FaultPlan(write_errors={1: errno.ENOSPC}))
            log.append(records[i : i + 3])
    names = segment_names(data_dir)
    assert len(names) > 2
    assert summaries(data_dir) == []
    assert not [n for n in os.listdir(data_dir) if n.endswith(".summary.new")]
    with Log.open(data_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert list(log.replay()) == records
    assert summaries(data_dir) == [n + ".summary" for n in names[:-1]]


def test_crash_at_every_step_of_a_roll_and_its_summary(tmp_path: Any) -> None:
    """A simulated crash at each file-system operation of the appends up to and including
    one that rolls (so writes a summary), with and without losing what was not fsynced:
    the log opens with every acknowledged record, no temporary file, and what open learns
    with the summaries left is what it learns without them."""
    records = history(12)
    extra = [commit(1000 + i, 5) for i in range(40)]

    def build(directory: str, fs: FaultyFileSystem) -> Log:
        log = Log.open(directory, segment_bytes=SEGMENT_BYTES, fs=fs)
        log.append(records)
        return log

    probe_fs = FaultyFileSystem()
    probe = build(os.path.join(str(tmp_path), "probe"), probe_fs)
    probe_fs.arm(FaultPlan())
    segments = len(probe.segments)
    appends = 0
    while len(probe.segments) == segments:
        probe.append([extra[appends]])
        appends += 1
    steps = list(probe_fs.op_log)
    probe.close()
    assert steps.count("rename") == 2  # the new segment's and the summary's
    for power_loss in (False, True):
        for crash_at in range(len(steps)):
            directory = os.path.join(str(tmp_path), f"run-{power_loss}-{crash_at}")
            fs = FaultyFileSystem()
            log = build(directory, fs)
            fs.arm(FaultPlan(crash_at=crash_at))
            acked = list(records)
            with pytest.raises(SimulatedCrash):
                for record in extra[:appends]:
                    log.append([record])
                    acked.append(record)
            if power_loss:
                fs.lose_unsynced()
            with Log.open(directory, segment_bytes=SEGMENT_BYTES) as log:
                replayed = list(log.replay())
            assert replayed[: len(acked)] == acked, (crash_at, steps[crash_at])
            assert len(replayed) <= len(acked) + 1
            assert not [n for n in os.listdir(directory) if n.endswith(".summary.new")]
            with_summaries = opened(directory)
            drop_summaries(directory)
            assert opened(directory) == with_summaries, (crash_at, steps[crash_at])
