"""``kcoord pipeline --follow``: the batch pipeline re-run in one kept SparkSession each time
the inputs' segment files change (a new segment, entries appended to the active one).

Why not Structured Streaming: offset_commits' lead/lag windows are refused on a stream
(NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING), so a foreachBatch sink would re-run the whole
batch per micro-batch anyway, and a kept session that only polls the files' sizes costs less
while idle (BENCHMARKS.md, "Following a growing log"). Each re-run rewrites every dataset
and the report, so a restart resumes without duplicating rows and, once the log stops
growing, the output equals a batch run's. A run is written aside and swapped in whole
(:mod:`.publish`): a reader of the output finds each dataset as one run or the next
wrote it, never missing or half written. SIGTERM or SIGINT lets the run under way finish
(the output stays consistent), then stops with one line and exit status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from storage.directory import find_segments

from .uris import location

Signature = tuple[tuple[str, int, int], ...]


def signature(data_dirs: Sequence[str]) -> Signature:
    """The segment files' paths, sizes and modification times: what changes when the log
    grows or a segment rolls or is compacted."""
    out: list[tuple[str, int, int]] = []
    for data_dir in data_dirs:
        for seg in find_segments(data_dir):
            with contextlib.suppress(FileNotFoundError):  # removed by a compaction meanwhile
                st = os.stat(seg.path)
                out.append((seg.path, st.st_size, st.st_mtime_ns))
    return tuple(out)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGTERM or SIGINT while inside (the handlers before are restored)."""
    stop = threading.Event()
    saved: dict[signal.Signals, Any] = {}

    def handler(signum: int, frame: object) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        saved[signum] = signal.signal(signum, handler)
    try:
        yield stop
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)


def follow(
    data_dirs: Sequence[str],
    run_once: Callable[[int], int],
    poll_s: float,
    err: TextIO,
    quiet: bool,
) -> int:
    """Run ``run_once(segment_count)`` now and after each change of the inputs' segment
    files, checked every ``poll_s`` seconds, until SIGTERM or SIGINT. A failed run is
    reported by ``run_once`` and retried at the next change; returns the exit status."""
    with stop_on_signals() as stop:
        last: Signature | None = None
        while not stop.is_set():
            current = signature(data_dirs)
            if current != last:
                last = current
                status = run_once(len(current))
                if status == 2:  # a setup error (say, the output went away): not retried
                    return 2
                if not quiet:
                    state = "up to date" if status == 0 else f"run ended with {status}"
                    print(f"kcoord pipeline: following: {state}, {len(current)} segment "
                          f"file(s); next check in {poll_s:g} s", file=err, flush=True)
            stop.wait(poll_s)
    print("kcoord pipeline: stopped following (SIGTERM/SIGINT); the output is complete "
          "up to the last run", file=err, flush=True)
    return 0


def follow_flag_problem(args: argparse.Namespace) -> str | None:
    """Why the flags cannot go with (or without) --follow, or None."""
    if not args.follow:
        return "--poll needs --follow" if args.poll is not None else None
    if args.poll is not None and not args.poll > 0:
        return "--poll must be a number of seconds above 0"
    if args.until is not None:
        return "--follow cannot take --until (a followed log has no end)"
    if args.strict:
        return "--follow cannot take --strict (a run would stop at the first torn append)"
    if any(location(p).uri for p in args.input):
        return "--follow reads local data directories only (no URI inputs)"
    return None
