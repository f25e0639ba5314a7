"""``kcoord ping --bootstrap HOST:PORT [--timeout S]``: wait until a broker answers.

For container healthchecks and wait-for scripts. Connects over TCP, sends an ApiVersions
v0 request and exits 0 as soon as a broker answers it with error_code 0 (kcoord or any
Kafka broker). Until then it retries every 200 ms -- refused connections, unresolvable
host names, connections closed or stalled before an answer, non-zero error codes -- each
attempt bounded by the time left (and by at most ``ATTEMPT_SECONDS``; resolving the host
name is bounded only by the system resolver's own timeouts).

Exit status: 0 answered; 1 no answer within ``--timeout`` (default 10 s), one line on
stderr; 2 bad arguments, one line on stderr. Stdlib sockets only: no event loop.
"""

from __future__ import annotations

import argparse
import math
import socket
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

import wire

__all__ = ["ATTEMPT_SECONDS", "DEFAULT_TIMEOUT", "RETRY_SECONDS", "main", "parse_bootstrap"]

DEFAULT_TIMEOUT = 10.0
RETRY_SECONDS = 0.2
ATTEMPT_SECONDS = 2.0
API_VERSIONS = 18
CLIENT_ID = "kcoord-ping"

EXIT_OK = 0
EXIT_TIMEOUT = 1
EXIT_USAGE = 2


class _UsageError(Exception):
    """A bad command line (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kcoord ping",
        description="Exit 0 once the broker at HOST:PORT answers an ApiVersions request.",
    )
    parser.add_argument("--bootstrap", required=True, metavar="HOST:PORT", help="the broker to ask")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"give up after S seconds, exit 1 (default {DEFAULT_TIMEOUT:g})",
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"timeout must be a positive number, not {text!r}")
    return value


def parse_bootstrap(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` as (host, port); ValueError when malformed."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not host or not port_text:
        raise ValueError(f"--bootstrap {text!r}: expected HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"--bootstrap {text!r}: write an IPv6 address as [ADDRESS]:PORT")
    if not host or any(c.isspace() or c in "[]/," for c in host):
        raise ValueError(f"--bootstrap {text!r}: invalid host")
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"--bootstrap {text!r}: port must be 1..65535")
    return host, int(port_text)


class _NoAnswer(Exception):
    """One attempt did not get a good ApiVersions answer (the reason is the message)."""


def _ask(host: str, port: int, correlation_id: int, budget: float) -> None:
    """One ApiVersions v0 round trip within ``budget`` seconds; _NoAnswer unless error 0."""
    deadline = time.monotonic() + budget
    request = wire.encode_request(API_VERSIONS, 0, correlation_id, CLIENT_ID, {})
    reader = wire.FrameReader(max_frame_bytes=1 << 20)
    try:
        with socket.create_connection((host, port), timeout=budget) as sock:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            sock.sendall(request)
            while True:
                payload = reader.next_frame()
                if payload is not wire.NEED_DATA:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _NoAnswer("no answer in time")
                sock.settimeout(left)
                data = sock.recv(65536)
                if not data:
                    raise _NoAnswer("connection closed before an answer")
                reader.receive_data(data)
    except TimeoutError:
        raise _NoAnswer("no answer in time") from None
    except OSError as exc:
        raise _NoAnswer(exc.strerror or str(exc) or type(exc).__name__) from None
    except (wire.FrameTooLarge, wire.CorruptFrame) as exc:
        raise _NoAnswer(f"bad answer: {exc}") from None
    assert isinstance(payload, bytes)
    try:
        got, body = wire.decode_response(API_VERSIONS, 0, payload)
    except wire.CorruptFrame as exc:
        raise _NoAnswer(f"bad answer: {exc}") from None
    if got != correlation_id:
        raise _NoAnswer(f"answer has correlation id {got}, expected {correlation_id}")
    error_code = int(body["error_code"])
    if error_code != 0:
        raise _NoAnswer(f"ApiVersions answered error_code {error_code}")


def ping(host: str, port: int, timeout: float) -> str | None:
    """None once the broker answers within ``timeout`` seconds, else the last reason."""
    deadline = time.monotonic() + timeout
    correlation_id = 0
    while True:
        correlation_id += 1
        budget = min(max(deadline - time.monotonic(), 0.05), ATTEMPT_SECONDS)
        try:
            _ask(host, port, correlation_id, budget)
        except _NoAnswer as exc:
            reason = " ".join(str(exc).split())
        else:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            return reason
        time.sleep(min(RETRY_SECONDS, left))


def main(argv: Sequence[str] | None = None) -> int:
    """``kcoord ping`` with ``argv`` (the arguments after ``ping``); the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(args_list)
        host, port = parse_bootstrap(args.bootstrap)
    except (_UsageError, ValueError) as exc:
        message = " ".join(str(exc).split())
        print(f"kcoord ping: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    reason = ping(host, port, args.timeout)
    if reason is None:
        return EXIT_OK
    print(
        f"kcoord ping: {args.bootstrap} did not answer ApiVersions within "
        f"{args.timeout:g}s: {reason}",
        file=sys.stderr,
    )
    return EXIT_TIMEOUT


if __name__ == "__main__":
    raise SystemExit(main())
