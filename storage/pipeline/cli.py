"""``kcoord pipeline``: kcoord data directories -> Parquet datasets and a report.

    kcoord pipeline --input DIR [DIR ...] --output OUT [--master local[*]|spark://HOST:PORT]
                    [--conf KEY=VALUE]... [--since T] [--until T] [--strict] [--quiet]
                    [--class-cache DIR]

DIR and OUT are local paths or filesystem URIs (``file:///d``, ``hdfs://nn:8020/d``,
``s3a://bucket/d``, ...): a URI is listed, read and written through Spark's Hadoop
filesystems (``hadoop_fs``, ``remote_source``); a scheme Spark has no filesystem for is
refused before any work.

``--conf`` passes Spark settings through (``spark.driver.host``, ``spark.executor.memory``,
``spark.pyspark.python``, ...). On a cluster master kcoord ships its own code to the
executors and checks, before the job, that they can import what it cannot ship
(``session.EXECUTOR_REQUIREMENTS``).

T is an ISO 8601 time (``2024-05-01``, ``2024-05-01T12:00:00Z``; UTC unless it has an
offset) or epoch milliseconds. ``--until`` gives the state as of T; ``--since`` limits
the history (commits, rebalances) to T and later.

Progress goes to stderr; the written files to stdout. Exit status: 0 done (a torn tail,
normal after a crash, is only reported); 1 done but some input was corrupt (read up to
the bad entry and reported: file and byte offset), or with ``--strict`` nothing written
because an input is corrupt, or an input file could not be read, or Spark failed; 2 bad
arguments, a missing input, a URI whose filesystem Spark does not have or cannot reach, the
``pipeline`` extra or Java missing, or a ``spark://`` master that does not answer (each
one line, no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

from storage.directory import find_segments

from .columns import CORRUPT, TORN_TAIL
from .follow import follow, follow_flag_problem
from .hadoop_fs import HadoopFiles, PipelineLocationError, RemoteInput, open_locations
from .preflight import missing_requirement, unreachable_master
from .progress import Progress
from .publish import publish, staging_dir
from .uris import Location, location

__all__ = ["main", "parse_time"]


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit status 2, without sys.exit
        raise _ArgumentError(message)


def parse_time(text: str) -> int:
    """Epoch milliseconds of an ISO 8601 time (UTC unless an offset is given) or of an
    integer (already milliseconds)."""
    value = text.strip()
    if value.lstrip("-").isdigit():
        return int(value)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"not a time: {text!r} (use e.g. 2024-05-01T12:00:00Z or epoch milliseconds)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def _parser() -> _Parser:
    p = _Parser(
        prog="kcoord pipeline",
        description="Turn kcoord data directories into offset and rebalance datasets "
        "(Parquet) and a report (report.md, report.html with plots), on Spark.",
    )
    p.add_argument(
        "--input",
        "-i",
        nargs="+",
        required=True,
        metavar="DIR",
        help="kcoord data directories (--data-dir of kcoord serve): paths or URIs "
        "(file://, hdfs://, s3a://, ...)",
    )
    p.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="DIR",
        help="where to write the datasets and the report: a path or a URI",
    )
    p.add_argument(
        "--master",
        default="local[*]",
        help="Spark master: local[*] (default), local[N], spark://host:port",
    )
    p.add_argument(
        "--conf",
        "-c",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting (repeatable), e.g. spark.driver.host=10.0.0.5",
    )
    p.add_argument("--since", metavar="T", help="history from T (ISO 8601 or epoch ms)")
    p.add_argument("--until", metavar="T", help="state and history up to T")
    p.add_argument(
        "--strict", action="store_true", help="fail (write nothing) when an input is corrupt"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--follow", "-f", action="store_true",
        help="keep running: re-run in the same Spark session whenever the inputs' segment "
        "files change, until SIGTERM or Ctrl-C (local inputs only)",
    )
    p.add_argument("--poll", type=float, metavar="S",
                   help="with --follow: seconds between checks of the inputs (default 2)")
    p.add_argument(
        "--class-cache",
        metavar="DIR",
        help="keep a class-data-sharing archive of Spark's JVM classes (about 190 MB) in "
        "DIR: the first run writes it at exit, later runs start the JVM faster "
        "(default: none; also KCOORD_SPARK_CDS=DIR)",
    )
    return p


def _preload() -> None:
    try:
        from .report_plots import preload

        preload()
    except Exception:  # the report's own import reports it
        pass


def _spark_error_text(exc: BaseException) -> str:
    """The useful line of a Spark failure (a worker's PipelineInputError, say)."""
    text = str(exc)
    found = re.findall(r"PipelineInputError: (.+)", text)
    if found:
        return str(found[-1]).strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def _report_problems(problems: list[dict[str, Any]], err: TextIO) -> bool:
    """Warn of torn tails, report corrupt inputs; whether any input is corrupt."""
    corrupt = False
    for p in problems:
        where = f"{os.path.join(p['data_dir'], p['segment'])} at byte {p['position']}"
        if p["record_type"] == TORN_TAIL:
            print(f"kcoord pipeline: warning: {where}: {p['problem']}", file=err)
        elif p["record_type"] == CORRUPT:
            corrupt = True
            print(
                f"kcoord pipeline: error: {where}: {p['problem']} "
                "(the other inputs are read; --strict to fail instead)",
                file=err,
            )
    return corrupt


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the pipeline; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = _parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except _ArgumentError as exc:
        parser.print_usage(err)
        print(f"kcoord pipeline: error: {exc}", file=err)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)

    conf: dict[str, str] = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not key.strip().startswith("spark."):
            print(f"kcoord pipeline: error: --conf {item!r}: expected spark.KEY=VALUE",
                  file=err)
            return 2
        conf[key.strip()] = value.strip()
    args.conf = conf
    try:
        since = parse_time(args.since) if args.since else None
        until = parse_time(args.until) if args.until else None
    except ValueError as exc:
        print(f"kcoord pipeline: error: {exc}", file=err)
        return 2
    if since is not None and until is not None and since > until:
        print("kcoord pipeline: error: --since is after --until", file=err)
        return 2
    problem = follow_flag_problem(args)
    if problem is not None:
        print(f"kcoord pipeline: error: {problem}", file=err)
        return 2

    try:
        locations = [location(p) for p in args.input]
        output = location(args.output)
    except ValueError as exc:
        print(f"kcoord pipeline: error: {exc}", file=err)
        return 2
    inputs: list[str] = []
    segments = 0
    for path, loc in zip(args.input, locations, strict=True):
        if loc.uri:  # checked and listed through Spark's filesystems once it runs
            continue
        if not os.path.exists(path):
            print(f"kcoord pipeline: error: input {path} does not exist", file=err)
            return 2
        if not os.path.isdir(path):
            print(f"kcoord pipeline: error: input {path} is not a directory", file=err)
            return 2
        try:
            found = find_segments(path)
        except OSError as exc:
            print(
                f"kcoord pipeline: error: cannot read input {path}: {exc.strerror or exc}", file=err
            )
            return 2
        if not found:
            print(
                f"kcoord pipeline: warning: {path} holds no segment files "
                "(NNNNNNNNNNNNNNNNNNNN.log); is it a kcoord --data-dir?",
                file=err,
            )
            if args.strict:
                return 2
            continue
        inputs.append(loc.text)
        segments += len(found)
    remote = [loc for loc in locations if loc.uri]
    if not inputs and not remote:
        print("kcoord pipeline: error: no input holds a kcoord log", file=err)
        return 2
    if not output.uri:
        out_dir = output.text
        if any(out_dir == i or out_dir.startswith(i + os.sep) for i in inputs):
            print("kcoord pipeline: error: --output must not be inside an input", file=err)
            return 2
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            print(f"kcoord pipeline: error: cannot create {out_dir}: {exc.strerror or exc}",
                  file=err)
            return 2

    problem = missing_requirement() or unreachable_master(args.master)
    if problem is not None:
        print(f"kcoord pipeline: error: {problem}", file=err)
        return 2
    if args.follow:
        return _follow(args, inputs, output, since, out, err)
    return _run(args, (inputs, remote), segments, output, since, until, out, err)


def _follow(
    args: argparse.Namespace,
    inputs: list[str],
    output: Location,
    since: int | None,
    out: TextIO,
    err: TextIO,
) -> int:
    try:
        from .driver_read import segment_bytes
        from .session import build_session

        spark = build_session(args.master, extra_conf=args.conf, quiet=args.quiet,
                              input_bytes=segment_bytes(inputs), class_cache=args.class_cache)
    except Exception as exc:
        print(f"kcoord pipeline: error: cannot start Spark: {_spark_error_text(exc)}", file=err)
        return 1
    try:  # _run uses the session started here and leaves it running
        return follow(
            inputs,
            lambda segments: _run(args, (inputs, []), segments, output, since, None, out, err),
            2.0 if args.poll is None else args.poll, err, args.quiet,
        )
    finally:
        with contextlib.suppress(Exception):
            spark.stop()


def _run(
    args: argparse.Namespace,
    given: tuple[list[str], list[Location]],
    segments: int,
    output: Location,
    since: int | None,
    until: int | None,
    out: TextIO,
    err: TextIO,
) -> int:
    inputs, remote = given
    from .driver_read import driver_frame, segment_bytes
    from .sizing import is_small

    # The job is sized to its input on any master (.sizing): a URI input's size is known
    # once the session lists it. A small input of local paths is parsed on the driver.
    local_bytes = segment_bytes(inputs)
    small = not remote and is_small(local_bytes)
    progress = Progress(err, args.quiet)
    # The report's imports (a second or more) while the JVM starts; failures show later.
    threading.Thread(target=_preload, name="pipeline-preload", daemon=True).start()
    progress.say(
        f"starting Spark ({args.master}) for {len(inputs) + len(remote)} input(s)"
        + (f", {segments} segment file(s)" if not remote else "")
    )
    try:
        from pyspark.sql import SparkSession

        from .session import build_session

        # A session already running in this process (a test's, a notebook's) is used and
        # left running; one started here is stopped at the end.
        owned = SparkSession.getActiveSession() is None
        spark = build_session(args.master, extra_conf=args.conf, quiet=args.quiet,
                              input_bytes=None if remote else local_bytes,
                              register_source=not small, class_cache=args.class_cache,
                              say=progress.say)
    except Exception as exc:
        text = str(exc)
        if "all masters are unresponsive" in text.lower():  # went away since the check
            print(f"kcoord pipeline: error: the Spark master {args.master} is unreachable "
                  "(all masters are unresponsive)", file=err)
            return 2
        hint = (" (Java could not start: is it Java 17?)"
                if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text
                else "")
        print(f"kcoord pipeline: error: cannot start Spark: {_spark_error_text(exc)}{hint}",
              file=err)
        return 1
    progress.watch(spark)
    raw = None
    files: HadoopFiles | None = None
    remote_inputs: list[RemoteInput] = []
    if remote or output.uri:
        files = HadoopFiles(spark)
        try:
            remote_inputs = open_locations(files, remote, inputs, output)
        except PipelineLocationError as exc:
            print(f"kcoord pipeline: error: {exc}", file=err)
            progress.stop()
            if owned:
                spark.stop()
            return 2
        empty = [r.location for r in remote_inputs if not r.segments]
        for loc in empty:
            print(f"kcoord pipeline: warning: {loc} holds no segment files "
                  "(NNNNNNNNNNNNNNNNNNNN.log); is it a kcoord --data-dir?", file=err)
        found = sum(len(r.segments) for r in remote_inputs)
        if (args.strict and empty) or not (found or inputs):
            if not (found or inputs):
                print("kcoord pipeline: error: no input holds a kcoord log", file=err)
            progress.stop()
            if owned:
                spark.stop()
            return 2
        segments += found
        if remote:
            from .session import size_job

            total = local_bytes + sum(sum(r.sizes) for r in remote_inputs)
            size_job(spark, args.master, total, args.conf)
            progress.say(f"{segments} segment file(s), {total:,} bytes")
    datasets: dict[str, Any] = {}
    if not (args.master.startswith("local") or small):  # a small input runs no Python there
        from .session import PipelineSetupError, check_executors

        progress.say("checking the executors")
        try:
            check_executors(spark)
        except Exception as exc:
            text = str(exc) if isinstance(exc, PipelineSetupError) else (
                f"cannot run a task on the executors: {_spark_error_text(exc)}")
            print(f"kcoord pipeline: error: {text}", file=err)
            progress.stop()
            if owned:
                spark.stop()
            return 1
    try:
        from pyspark import StorageLevel

        from . import jobs, lag, report, report_data
        from .remote_source import load_inputs, read_failure, render_report

        progress.say("reading segments")
        try:
            if small:
                df = driver_frame(spark, inputs, args.strict)  # no Python workers to start
            else:
                df = load_inputs(spark, inputs, remote_inputs, args.strict)
            raw = df.persist(StorageLevel.MEMORY_AND_DISK)
            recs = jobs.apply_window(raw, since, until)
            # The first job: fills the cache and counts the records by type.
            read, counts = report_data.count_records(
                raw, recs, windowed=since is not None or until is not None)
        except Exception as exc:
            text = _spark_error_text(exc)
            from .parse import PipelineInputError, PipelineReadError

            # Raised here when the driver parsed a small input; inside Spark's error else.
            direct = isinstance(exc, PipelineReadError)
            unreadable = str(exc) if direct else read_failure(str(exc))
            if unreadable is not None:
                print(f"kcoord pipeline: error: unreadable input: {unreadable}", file=err)
            elif isinstance(exc, PipelineInputError) or "PipelineInputError" in str(exc):
                print(f"kcoord pipeline: error: corrupt input: {text}", file=err)
            else:
                print(f"kcoord pipeline: error: reading the inputs failed: {text}", file=err)
            if args.strict:
                print("kcoord pipeline: nothing written (--strict)", file=err)
            return 1
        progress.say(f"read {read:,} records")
        progress.say("reading the topics' log ends")
        topic_logs = lag.read_inputs(inputs, [r.location.text for r in remote_inputs])
        # A small input's report is computed on the driver from the datasets, each
        # collected once after its write; a large one's by Spark queries on their caches.
        local_report = ("groups_summary", "rebalances", "offset_commits", "offsets_latest",
                        "offsets_lag") if small else ()
        # A followed output is read while it is rewritten: each run is written aside and
        # swapped in whole (.publish), so a reader never sees a dataset half written.
        staged = staging_dir(output.text) if args.follow and not output.uri else None
        datasets, paths, collected = report_data.write_datasets(
            recs, raw, output.text, since, progress.say, topic_logs=topic_logs,
            until_ms=until, collect=("problems", *local_report), write_to=staged,
        )
        problems = collected["problems"]
        corrupt = _report_problems(problems, err)
        progress.say("collecting the report")
        names = [*inputs, *(str(r.location) for r in remote_inputs)]
        if small:
            from .report_local import collect_local

            data = collect_local(collected, counts, names, segments, paths, (since, until),
                                 topic_logs=topic_logs)
        else:
            data = report_data.collect(datasets, counts, problems, names, segments, paths,
                                       (since, until), topic_logs=topic_logs)
        data.elapsed_s = time.monotonic() - progress.t0
        if files is not None and output.uri:
            written = render_report(files, output, lambda tmp: report.render(data, tmp))
        elif staged is not None:
            written = {name: os.path.join(output.text, os.path.relpath(path, staged))
                       for name, path in report.render(data, staged).items()}
            publish(staged, output.text)
        else:
            written = report.render(data, output.text)
        progress.say("done")
    except Exception as exc:
        print(f"kcoord pipeline: error: Spark job failed: {_spark_error_text(exc)}", file=err)
        return 1
    finally:
        progress.stop()
        # After a failure the JVM may be gone (out of memory, say): the error is already
        # reported, and cleaning up must not end in a traceback of its own.
        with contextlib.suppress(Exception):
            for frame in datasets.values():
                frame.unpersist()
            if raw is not None:
                raw.unpersist()
        if owned:
            with contextlib.suppress(Exception):
                spark.stop()
    for name, path in {**paths, **written}.items():
        print(f"{name}\t{path}", file=out)
    return 1 if corrupt else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
