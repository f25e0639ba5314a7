"""The log cleaner's file work in a child process (``storage.log_cleaner_process``, as the
server runs it): side by side with the same round in the calling thread, the same result,
the same files and the same partition in memory; a failing child leaves the log as it was
and says why."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from cleaner_support import Cleaning

from storage import log_cleaner_process
from storage.errors import CompactionError
from storage.log_cleaner import CleanResult, write_cleaned
from storage.log_cleaner_process import write_cleaned_in_child

SMALL = {"segment.bytes": "1024", "delete.retention.ms": "0"}


def _build(data_dir: Path) -> Cleaning:
    """A compacted partition with overwritten keys, tombstones, an aborted and a committed
    transaction, an idempotent producer and a moved log start, over several segments."""
    log = Cleaning(data_dir, SMALL)
    for r in range(6):
        log.append([(k, r * 100 + k) for k in range(8)], timestamp=1_000 + r)
        if r == 2:
            log.append_txn(7, [1, 2, 30])
            log.marker(7, commit=False)
        if r == 4:
            log.append_txn(8, [5, 31])
            log.marker(8, commit=True)
            log.append_idempotent(9, [6, 32])
    log.append([(3, None), (4, None)], timestamp=2_000)  # dropped once past their horizon
    log.partition.advance_log_start(3)
    log.roll()
    log.append([(1, 999)], timestamp=3_000)  # the active segment: never cleaned
    return log


def _partition_files(log: Cleaning) -> dict[str, bytes]:
    return {name: (log.directory / name).read_bytes()
            for name in sorted(os.listdir(log.directory)) if name.endswith(".log")}


def _without_seconds(result: CleanResult) -> CleanResult:
    return dataclasses.replace(result, seconds=0.0)


@pytest.mark.parametrize("dedupe_buffer_size", [1 << 20, 121 * 12],
                         ids=["whole-range", "map-fills"])
def test_the_child_cleans_as_the_thread_does(tmp_path: Path, dedupe_buffer_size: int) -> None:
    """Two rounds each way (the second from offset 0 again, past the tombstones' delete
    horizon): equal results but their seconds, equal segment files, equal batches, each
    read back from where the result says it lies."""
    here, child = _build(tmp_path / "thread"), _build(tmp_path / "child")
    here.manager.write = write_cleaned
    child.manager.write = write_cleaned_in_child
    for log in (here, child):
        log.manager.dedupe_buffer_size = dedupe_buffer_size
    for now_ms in (10_000, 20_000):
        done_here, done_child = here.clean(now_ms, 0), child.clean(now_ms, 0)
        assert _without_seconds(done_child) == _without_seconds(done_here)
        assert done_here.groups and done_here.records_kept < done_here.records_read
        assert _partition_files(child) == _partition_files(here)
        assert [(b.base_offset, b.last_offset, b.data) for b in child.partition.batches] == [
            (b.base_offset, b.last_offset, b.data) for b in here.partition.batches]
        # what the cleaner kept is read from its segment file (checked: base offset, length,
        # CRC), as an appended batch is; memory does not hold its bytes
        assert all(b.held is None for log in (here, child) for b in log.partition.batches)
    assert child.values_by_key() == here.values_by_key()
    child.reload()
    assert child.offsets_in_log() == here.offsets_in_log()
    here.close()
    child.close()


def test_an_answer_the_parent_cannot_read_leaves_the_log_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child committed its swaps, but its answer does not parse: the parent deletes
    them, and the log on disk and in memory is as before (also after a restart)."""
    log = _build(tmp_path)
    log.manager.write = write_cleaned_in_child
    before, files = log.offsets_in_log(), _partition_files(log)

    def garbled(out: bytes) -> CleanResult:
        raise ValueError("garbled answer")

    monkeypatch.setattr(log_cleaner_process, "_read_result", garbled)
    with pytest.raises(CompactionError, match=r"garbled answer.*the log is unchanged"):
        log.clean(10_000)
    assert not [n for n in os.listdir(log.directory) if n.endswith((".swap", ".cleaned"))]
    assert log.offsets_in_log() == before and _partition_files(log) == files
    log.reload()
    assert log.offsets_in_log() == before
    log.close()


def test_a_child_that_fails_names_the_reason_and_changes_nothing(tmp_path: Path) -> None:
    """A closed segment that does not read: the child exits with its reason, which the
    parent's CompactionError carries; nothing on disk or in memory changed."""
    log = _build(tmp_path)
    log.manager.write = write_cleaned_in_child
    before, files = log.batch_base_offsets(), _partition_files(log)
    directory = log.directory
    second = sorted(n for n in os.listdir(directory) if n.endswith(".log"))[1]
    damaged = bytearray(files[second])
    damaged[len(damaged) // 2] ^= 0xFF
    (directory / second).write_bytes(bytes(damaged))
    with pytest.raises(CompactionError, match="log cleaning failed") as failed:
        log.clean(10_000)
    assert "exited with" not in str(failed.value)  # the child's own last line
    assert not [n for n in os.listdir(directory) if n.endswith((".swap", ".cleaned"))]
    assert log.batch_base_offsets() == before  # (their bytes are read from the damaged file)
    assert _partition_files(log) == {**files, second: bytes(damaged)}
    log.close()
