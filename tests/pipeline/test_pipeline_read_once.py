"""A ``kcoord pipeline`` run reads the log once (issue 34): the parsed frame is cached by
the run's first job and every dataset, and the report, are derived from that cache.

Shown with Spark's own numbers: the run writes an event log, and the rows that came out
of the plan nodes that scan the segments (``spark_events``: the driver-read table's
``LocalTableScan`` for a small input, the ``kcoord-log`` source's ``BatchScan`` for a large
one), summed over every task, equal the log's records, read by as many tasks as the scan
has partitions. A dataset that re-read the log (an uncached frame, a cache evicted and
recomputed) would add its rows again.

Slow (a JVM per run, about 20 s each): ``pytest -m slow tests/pipeline``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_support import NEEDS_EXTRA
from spark_events import EVENT_LOG_CONF, event_counts
from synthetic import write_log

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

#: Runs the CLI with the small-input threshold set to ``sys.argv[1]`` bytes (0: every
#: input is read through the kcoord-log Data Source, as a large one is).
_RUN = """
import sys
import storage.pipeline.sizing as sizing
sizing.SMALL_INPUT_BYTES = int(sys.argv[1])
from storage.pipeline.cli import main
sys.exit(main(sys.argv[2:]))
"""


def parsed_rows(data: Path) -> int:
    from storage.directory import find_segments
    from storage.pipeline.arrow_rows import arrow_schema
    from storage.pipeline.vector_parse import segment_batches

    return sum(batch.num_rows for seg in find_segments(str(data))
               for batch in segment_batches(seg, arrow_schema()))


@pytest.mark.parametrize(
    ("reader", "window"),
    [("driver", ()), ("data source", ()), ("data source", ("--until", "1700000600000"))],
)
def test_a_run_reads_the_log_once(tmp_path: Path, reader: str, window: tuple[str, ...]) -> None:
    pytest.importorskip("pyspark", reason=NEEDS_EXTRA)
    from storage.directory import find_segments
    from storage.pipeline.sizing import SMALL_INPUT_BYTES
    from storage.pipeline.source import pack_segments

    data = tmp_path / "data"
    write_log(str(data), groups=3, steps=60, segment_bytes=16 * 1024)
    segments = find_segments(str(data))
    assert len(segments) > 1
    events = tmp_path / "events"
    events.mkdir()
    threshold = SMALL_INPUT_BYTES if reader == "driver" else 0
    conf = [arg for item in (*EVENT_LOG_CONF, f"spark.eventLog.dir={events}")
            for arg in ("--conf", item)]
    run = subprocess.run(
        [sys.executable, "-c", _RUN, str(threshold), "-q", "-i", str(data),
         "-o", str(tmp_path / "out"), "--master", "local[2]", *window, *conf],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-4000:]
    counts = event_counts(str(events))
    # Every dataset was written and came from the one read.
    assert counts["jobs"] > 7
    assert counts["log rows scanned"] == parsed_rows(data)
    tasks = 1 if reader == "driver" else len(pack_segments(segments))
    assert counts["log scan tasks"] == tasks
    assert (tmp_path / "out" / "report.html").exists()
