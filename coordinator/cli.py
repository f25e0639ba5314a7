"""The ``kcoord`` command line: ``serve``, ``ping``, ``groups``, ``log dump DIR`` and
``pipeline``.

A contract other tools rely on: bad flags, unknown configuration keys and bad values, and
every start-up check (``coordinator/startup_checks.py``: the data directory, the control
port) print ONE line on stderr and exit with status 2 before anything binds; once bound,
``kcoord listening on HOST:PORT`` (the real port) goes to stdout, and a stdout whose reader
went away never stops the server; SIGTERM/SIGINT shut down cleanly with status 0. Heavy
modules are imported only by the subcommand that needs them, once arguments are valid:
trio costs about 110 ms and the wire codecs 45-65 ms on an idle machine (``python -X
importtime``), which ``log dump`` and a refused flag do without; ``serve`` binds before
importing either (``coordinator/server/early.py``), answers Metadata once the topic store is
loaded and the coordinator's APIs once the log is replayed (``coordinator/server/app.py``).
A SIGTERM/SIGINT that arrives before trio is running is kept and acted on once it is.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import socket

    from coordinator.server.options import ServeOptions

__all__ = ["main"]

log = logging.getLogger("coordinator.cli")

EXIT_USAGE = 2
EXIT_FAILURE = 1


class _UsageError(Exception):
    """A bad command line or configuration (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kcoord",
        description="A Kafka-compatible consumer-group coordinator emulator.",
    )
    parser.add_argument("-V", "--version", action="store_true",
                        help="print kcoord's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="run the server",
        description="Run kcoord: a Kafka broker surface with a classic group coordinator.",
    )
    serve.add_argument("--host", help="address to bind (default 127.0.0.1; not with "
                       "the listeners key)")
    serve.add_argument(
        "--port", type=_port, help="port to bind, 0 = ephemeral (default 9092; not with the "
        "listeners key)"
    )
    serve.add_argument(
        "--sasl-user", action="append", default=[], metavar="NAME:PASSWORD",
        help="a SASL user with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 credentials "
        "(repeatable; needs listeners=SASL_PLAINTEXT://HOST:PORT)",
    )
    serve.add_argument(
        "--brokers", type=_broker_count, default=1, metavar="N",
        help="brokers in this process, node ids 0..N-1, sharing one coordinator and data "
        "directory; broker i listens on --port + i (default 1)",
    )
    serve.add_argument(
        "--advertised-host",
        default=os.environ.get("KCOORD_ADVERTISED_HOST") or None,
        help="host name given to clients in Metadata/FindCoordinator (default: the "
        "KCOORD_ADVERTISED_HOST environment variable, else --host)",
    )
    serve.add_argument(
        "--data-dir", default="./kcoord-data", help="where the log lives (default ./kcoord-data)"
    )
    serve.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="NAME[:PARTITIONS]",
        help="pre-create a topic (repeatable; partitions default to num.partitions)",
    )
    serve.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka configuration property (repeatable; overrides --config-file)",
    )
    serve.add_argument(
        "--config-file",
        default=None,
        metavar="FILE",
        help="Kafka server.properties-style configuration file",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=["debug", "info", "warning", "error", "critical"],
        help="logging level on stderr (default info)",
    )
    serve.add_argument(
        "--topic-storage",
        default="disk",
        choices=["disk", "memory"],
        help="keep topics and their records in the data directory (default) or only in "
        "memory (they vanish with the process; group state stays durable)",
    )
    serve.add_argument(
        "--fsync",
        default="interval",
        choices=["always", "interval", "never"],
        help="when the logs are fsynced: every second (default, as Kafka leaves flushing to "
        "the OS), before every answer, or never; every acknowledged write reaches the OS "
        "before its answer in all three",
    )
    serve.add_argument(
        "--recover",
        default="fail",
        choices=["fail", "truncate"],
        help="corruption in the middle of the log: refuse to start (default) or truncate there",
    )
    serve.add_argument(
        "--control-port",
        type=_port,
        default=None,
        metavar="PORT",
        help="serve the HTTP control API (virtual time, faults, groups) on 127.0.0.1:PORT; off "
        "by default",
    )
    commands.add_parser(
        "pipeline",
        help="turn data directories into datasets and a report (needs kcoord[pipeline])",
        add_help=False,
    )
    commands.add_parser(
        "ping", help="wait until a broker answers ApiVersions (kcoord ping --help)", add_help=False
    )
    commands.add_parser(
        "groups",
        help="list consumer groups, or describe their members and lag (kcoord groups --help)",
        add_help=False,
    )
    logs = commands.add_parser("log", help="inspect a data directory")
    log_commands = logs.add_subparsers(dest="log_command", metavar="COMMAND")
    log_commands.add_parser("dump", help="print the records of a data directory", add_help=False)
    return parser


_MAX_BROKERS = 64


def _broker_count(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid broker count {text!r}") from None
    if not 1 <= value <= _MAX_BROKERS:
        raise argparse.ArgumentTypeError(f"broker count {value} is outside 1..{_MAX_BROKERS}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 0..65535")
    return value


def _properties(args: argparse.Namespace) -> dict[str, str]:
    from coordinator.server.options import parse_properties

    props: dict[str, str] = {}
    if args.config_file is not None:
        try:
            with open(args.config_file, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise _UsageError(f"--config-file {args.config_file}: {exc.strerror or exc}") from None
        props.update(parse_properties(text, args.config_file))
    for item in args.config:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise _UsageError(f"-c/--config {item!r}: expected KEY=VALUE")
        props[key] = value.strip()
    return props


def _options(args: argparse.Namespace) -> ServeOptions:
    from coordinator.server.listeners import parse_sasl_user
    from coordinator.server.options import build_options, parse_topic

    topics = tuple(parse_topic(t) for t in args.topic)
    options = build_options(
        _properties(args),
        sasl_users=tuple(parse_sasl_user(u) for u in args.sasl_user),
        host=args.host,
        port=args.port,
        advertised_host=args.advertised_host,
        data_dir=args.data_dir,
        topics=topics,
        fsync=args.fsync,
        recover=args.recover,
        topic_storage=args.topic_storage,
        brokers=args.brokers,
    )
    # The address bound: the listener's, the flags' or the defaults.
    args.host, args.port = options.host, options.port
    if args.port and args.port + args.brokers - 1 > 65535:
        raise _UsageError(f"--brokers {args.brokers} from --port {args.port}: broker "
                          f"{args.brokers - 1} would need port {args.port + args.brokers - 1}")
    return options


def _announce(line: str) -> None:
    """Print a status line on stdout. A reader that went away (``kcoord serve | head -1``)
    must not stop the server: stdout is pointed at /dev/null from then on, so neither this
    nor the interpreter's last flush raises BrokenPipeError."""
    try:
        print(line, flush=True)
    except (BrokenPipeError, ValueError):  # ValueError: stdout already closed
        _silence_stdout()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


async def _serve_until_signal(options: ServeOptions, control_port: int | None = None) -> None:
    import signal

    import trio

    from coordinator.server.app import serve
    from coordinator.server.collector import CollectorPauses, frozen_survivors

    def listening(host: str, port: int, name: str | None) -> None:
        _announce(_listening_line(host, port, name))

    def broker_listening(node_id: int, host: str, port: int, name: str | None) -> None:
        _announce(f"kcoord broker {node_id} {_listening(host, port, name)}")

    faults = None
    if control_port is not None:
        from coordinator.server.faults import FaultInjector

        faults = FaultInjector()
    options = dataclasses.replace(
        options,
        # The early listener's line is printed already.
        on_listening=listening if options.early is None else None,
        on_broker_listening=broker_listening,
        faults=faults,
    )
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        if _early_signals:  # it came while trio was being imported
            log.info("%s received: shutting down", signal.Signals(_early_signals[0]).name)
            return
        async with trio.open_nursery() as nursery:
            running = await nursery.start(serve, options)
            if control_port is not None and faults is not None:
                from coordinator.testing.control_http import serve_control

                bound = await nursery.start(serve_control, running, faults, control_port)
                _announce(f"kcoord control API listening on 127.0.0.1:{bound}")
            # The process is the server's: its loaded state is long-lived (collector.py).
            pauses = CollectorPauses()
            with frozen_survivors() as policy, pauses.registered():
                log.info("loaded state frozen: collections walk only what is newer")
                async for signum in signals:
                    log.info("%s received: shutting down", signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break
        log.info("stopped; %s; the whole heap unfrozen %d times (it grew %gx)",
                 pauses.summary(), policy.sweeps, policy.growth)


def _run_serve(args: argparse.Namespace) -> int:
    from coordinator.config import ConfigError

    _configure_logging(args.log_level)
    try:
        options = _options(args)
    except ConfigError as exc:
        raise _UsageError(str(exc)) from None
    # Every check comes before anything binds, so "listening" is never printed for a server
    # that cannot start.
    from coordinator.startup_checks import (
        StartupCheckError,
        check_control_port,
        check_data_dir,
        port_problem,
    )

    try:
        check_data_dir(args.data_dir)
        check_control_port(args.control_port, args.port, args.brokers)
    except StartupCheckError as exc:
        raise _UsageError(str(exc)) from None
    if args.control_port:
        problem = port_problem("127.0.0.1", args.control_port)
        if problem is not None:
            print(f"kcoord: cannot serve the control API on 127.0.0.1:{args.control_port}: "
                  f"{problem}", file=sys.stderr)
            return EXIT_FAILURE
    for node_id in range(1, args.brokers if args.port else 0):
        problem = port_problem(args.host or "0.0.0.0", args.port + node_id)
        if problem is not None:
            print(f"kcoord: cannot serve broker {node_id} on {args.host or '0.0.0.0'}:"
                  f"{args.port + node_id}: {problem}", file=sys.stderr)
            return EXIT_FAILURE
    # Bound before trio and the codecs are imported (connections wait in the backlog); a
    # signal before trio takes them over is kept, then acted on.
    import signal

    previous = {signum: signal.signal(signum, _keep_early_signal)
                for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _serve_early(options, args)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _listening_line(host: str, port: int, name: str | None) -> str:
    """``kcoord listening on HOST:PORT``, with `` (NAME)`` when ``listeners`` names it."""
    return f"kcoord {_listening(host, port, name)}"


def _listening(host: str, port: int, name: str | None) -> str:
    return f"listening on {host}:{port}{f' ({name})' if name else ''}"


def _serve_early(options: ServeOptions, args: argparse.Namespace) -> int:
    from coordinator.server.early import bind_listeners, probe_lock

    try:
        if options.sink is None and options.data_dir is not None:
            probe_lock(options.data_dir)
    except Exception as exc:
        return _serve_failure(exc, args)
    # (host, port, name) of each listener: the listeners key's, else the one unnamed
    wanted: list[tuple[str, int, str | None]] = [
        (served.listener.host, served.listener.port, served.listener.name)
        for served in options.listeners if served.listener is not None
    ] or [(options.host, options.port, None)]
    bound: list[list[socket.socket]] = []
    try:
        try:
            for host, port, _ in wanted:
                args.host, args.port = host, port  # (named by a failure to bind)
                bound.append(bind_listeners(port, host or None))
        except Exception as exc:
            return _serve_failure(exc, args)
        args.host, args.port = wanted[0][:2]
        for (host, _, name), sockets in zip(wanted, bound, strict=True):
            _announce(_listening_line(host or "0.0.0.0", int(sockets[0].getsockname()[1]),
                                      name))
        return _run_trio(dataclasses.replace(options, early=bound), args)
    finally:
        for sockets in bound:  # those serve took over are closed already
            for sock in sockets:
                sock.close()


_early_signals: list[int] = []


def _keep_early_signal(signum: int, frame: object) -> None:
    _early_signals.append(signum)


def _run_trio(options: ServeOptions, args: argparse.Namespace) -> int:
    import trio

    clock = None
    if args.control_port is not None:
        import trio.testing

        # A clock the control API can jump: it follows real time until told otherwise.
        clock = trio.testing.MockClock(rate=1.0)
    try:
        trio.run(_serve_until_signal, options, args.control_port, clock=clock)
    except Exception as exc:
        return _serve_failure(exc, args)
    return 0


def _serve_failure(exc: Exception, args: argparse.Namespace) -> int:
    """The exit status for a storage or socket failure (one line on stderr); re-raises
    anything else."""
    leaf = _single_leaf(exc)
    if type(leaf).__module__.startswith("storage"):
        print(f"kcoord: {leaf}", file=sys.stderr)
        return EXIT_FAILURE
    if isinstance(leaf, OSError):
        print(f"kcoord: cannot serve on {args.host}:{args.port}: {leaf}", file=sys.stderr)
        return EXIT_FAILURE
    raise exc


def _single_leaf(exc: BaseException) -> BaseException:
    """The one exception inside (nested) exception groups, or ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kcoord`` and ``python -m coordinator``; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list in (["--version"], ["-V"]):
        print(f"kcoord {_version()}")
        return 0
    if args_list[:2] == ["log", "dump"]:
        from storage.dump import main as dump_main

        return int(dump_main(args_list[2:]))
    if args_list[:1] == ["pipeline"]:
        try:
            from storage.pipeline.cli import main as pipeline_main
        except ImportError as exc:
            print(
                f"kcoord: pipeline needs the pipeline extra (pip install 'kcoord[pipeline]'): "
                f"{exc}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        return int(pipeline_main(args_list[1:]))
    if args_list[:1] == ["ping"]:
        from coordinator.ping import main as ping_main

        return int(ping_main(args_list[1:]))
    if args_list[:1] == ["groups"]:
        from coordinator.groups_cli import main as groups_main

        return int(groups_main(args_list[1:]))
    try:
        args = _parser().parse_args(args_list)
        if args.version:
            print(f"kcoord {_version()}")
            return 0
        if args.command == "serve":
            return _run_serve(args)
        if args.command == "log":
            raise _UsageError("usage: kcoord log dump DIR [--json]")
        raise _UsageError(
            "a command is required: serve, ping, groups, log dump or pipeline (see kcoord --help)"
        )
    except _UsageError as exc:
        print(f"kcoord: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kcoord")
    except PackageNotFoundError:  # running from a checkout without installing
        return "unknown"


def run() -> None:
    """Console-script wrapper: exit with main()'s status."""
    sys.exit(main())
