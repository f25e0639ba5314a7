"""What ``serve`` needs to know, and how Kafka-style configuration becomes that.

Configuration keys use Kafka's names. ``group.*`` / ``offset*`` keys go to the coordinator
(``CoordinatorConfig``), ``socket.request.max.bytes`` and ``connections.max.idle.ms`` to the
network layer here, everything else to the broker surface (``validate_broker_config``),
which refuses what it does not know. Every refusal is a one-line :class:`ConfigError`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coordinator.config import KNOWN_KEYS as COORDINATOR_KEYS
from coordinator.config import ConfigError, CoordinatorConfig
from coordinator.server.answer_memory import DEFAULT_SEND_TIMEOUT_MS
from coordinator.server.listeners import (
    Listener,
    ServedListener,
    check_listener_names,
    is_listener_key,
    parse_listeners,
    sasl_settings,
)
from coordinator.server.security_setup import AUTHORIZER_KEYS, validate_authorizer
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from storage.policy import FsyncPolicy, RecoverMode

__all__ = [
    "DEFAULT_CONNECTIONS_MAX_IDLE_MS",
    "DEFAULT_MAX_OPEN_SEGMENT_FILES",
    "DEFAULT_QUEUED_MAX_REQUEST_BYTES",
    "DEFAULT_SOCKET_REQUEST_MAX_BYTES",
    "MAX_OPEN_SEGMENT_FILES",
    "SERVER_KEYS",
    "ConfigError",
    "ServeOptions",
    "build_options",
    "parse_properties",
    "parse_topic",
]

DEFAULT_SOCKET_REQUEST_MAX_BYTES = 104_857_600
DEFAULT_CONNECTIONS_MAX_IDLE_MS = 600_000
#: Kafka's default is -1 (unbounded); kcoord bounds all partially received requests
#: together at twice the largest request.
DEFAULT_QUEUED_MAX_REQUEST_BYTES = 2 * DEFAULT_SOCKET_REQUEST_MAX_BYTES
_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1
MAX_OPEN_SEGMENT_FILES = "kcoord.max.open.segment.files"
#: (``storage.open_files.DEFAULT_MAX_OPEN_SEGMENT_FILES``, not imported: startup cost.)
DEFAULT_MAX_OPEN_SEGMENT_FILES = 256
#: All answers being written: twice Kafka's ``fetch.max.bytes`` default.
DEFAULT_QUEUED_MAX_RESPONSE_BYTES = 2 * 57_671_680

#: Keys the network layer owns, with their accepted ranges (Kafka's).
SERVER_KEYS: dict[str, tuple[int, int]] = {
    "socket.request.max.bytes": (1, _INT_MAX),
    "connections.max.idle.ms": (-1, _LONG_MAX),
    "queued.max.request.bytes": (-1, _LONG_MAX),
    "max.connections": (0, _INT_MAX),
    # Several brokers (--brokers): replicas per topic partition (at most the broker count),
    # the internal topics' partition counts (coordinator placement), and how long a
    # coordinator that just took a partition over answers COORDINATOR_LOAD_IN_PROGRESS.
    "default.replication.factor": (1, 32767),
    "offsets.topic.num.partitions": (1, 100_000),
    "transaction.state.log.num.partitions": (1, 100_000),
    "coordinator.load.delay.ms": (0, 3_600_000),
    # kcoord's own: the partition logs' open files (``storage.open_files``).
    MAX_OPEN_SEGMENT_FILES: (1, _INT_MAX),
    # Answers being written (``coordinator.server.answer_memory``).
    "socket.send.buffer.bytes": (-1, _INT_MAX),
    "socket.send.timeout.ms": (1, _INT_MAX),
    "kcoord.queued.max.response.bytes": (-1, _LONG_MAX),
}

#: Kafka broker keys a real ``server.properties`` carries that mean nothing for one kcoord
#: process (cluster membership, listeners, threads, replication, ZooKeeper): accepted with
#: one warning each, so an existing configuration file works.
IGNORED_BROKER_KEYS = frozenset({
    "broker.id", "node.id", "process.roles", "controller.quorum.voters",
    "controller.quorum.bootstrap.servers", "controller.listener.names",
    "inter.broker.listener.name",
    "num.network.threads", "num.io.threads", "num.replica.fetchers",
    "socket.receive.buffer.bytes", "log.dirs", "log.dir",
    "num.recovery.threads.per.data.dir", "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
    "share.coordinator.state.topic.replication.factor",
    "share.coordinator.state.topic.min.isr",
    "min.insync.replicas", "unclean.leader.election.enable", "delete.topic.enable",
    "log.flush.interval.messages", "log.flush.interval.ms", "log.cleaner.enable",
    "zookeeper.connect", "zookeeper.connection.timeout.ms", "metadata.log.dir",
    "auto.leader.rebalance.enable", "replica.lag.time.max.ms",
})

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class ServeOptions:
    """Everything ``coordinator.server.app.serve`` needs."""

    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    #: None: keep records in memory (nothing survives the process).
    data_dir: str | None = "./kcoord-data"
    #: (name, partitions or None for num.partitions) pre-created at startup.
    topics: tuple[tuple[str, int | None], ...] = ()
    coordinator_config: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    #: Every configuration property given (Kafka names), for the broker's handlers.
    properties: Mapping[str, str] = field(default_factory=dict, repr=False)  # (passwords)
    #: The broker keys as ``validate_broker_config`` normalised them (defaults filled in).
    broker_config: Mapping[str, str] = field(default_factory=dict)
    fsync: FsyncPolicy = "interval"
    #: What to do with corruption in the middle of the log: "fail" (refuse to start) or
    #: "truncate" (drop from the corruption on, and report it).
    recover: RecoverMode = "fail"
    #: ``disk``: topics and records persist in the data directory; ``memory``: they live
    #: only in the process (the group coordinator's log stays durable either way).
    topic_storage: str = "disk"
    socket_request_max_bytes: int = DEFAULT_SOCKET_REQUEST_MAX_BYTES
    connections_max_idle_ms: int = DEFAULT_CONNECTIONS_MAX_IDLE_MS
    #: All partially received requests together (bytes; -1: unbounded).
    queued_max_request_bytes: int = DEFAULT_QUEUED_MAX_REQUEST_BYTES
    #: ``max.connections``: connections beyond it are closed at once.
    max_connections: int = _INT_MAX
    #: ``kcoord.max.open.segment.files``: descriptors the partition logs keep open.
    max_open_segment_files: int = DEFAULT_MAX_OPEN_SEGMENT_FILES
    #: ``kcoord.queued.max.response.bytes``: all answers being written (-1: unbounded).
    queued_max_response_bytes: int = DEFAULT_QUEUED_MAX_RESPONSE_BYTES
    #: ``socket.send.buffer.bytes``: SO_SNDBUF of each connection (-1: the OS default).
    socket_send_buffer_bytes: int = -1
    #: ``socket.send.timeout.ms``: how long an answer may wait for its reader.
    socket_send_timeout_ms: int = DEFAULT_SEND_TIMEOUT_MS
    #: A record sink to use instead of a data directory (tests: ``MemorySink``).
    sink: Any = None
    #: Wall-clock milliseconds source for the runtime (tests).
    clock_ms: Any = None
    #: Called with (host, port, listener name) for each listener as soon as they are bound,
    #: before the coordinator is loaded (the CLI prints its "listening" lines there).
    on_listening: Any = None
    #: The listening sockets, bound before trio was imported (the CLI,
    #: ``coordinator.server.early``); ``serve`` takes them over.
    early: Any = None
    #: A ``coordinator.server.faults.FaultInjector`` consulted for every request (tests).
    faults: Any = None
    node_id: int = 0
    #: ``--brokers``: brokers in this process, node ids 0..brokers-1 (``cluster.Cluster``).
    brokers: int = 1
    #: Each broker's port, when given one by one (the fixture's restart); otherwise broker
    #: i listens on ``port + i`` (every one on an ephemeral port when ``port`` is 0).
    broker_ports: tuple[int, ...] = ()
    default_replication_factor: int = 1
    #: Called with (node id, host, port, listener name) for each listener of each broker
    #: after the first (``--brokers``).
    on_broker_listening: Any = None
    coordinator_load_delay_ms: int = 0
    #: The ``listeners`` key's listeners, in order (``host`` and ``port`` are the first
    #: one's); empty: one PLAINTEXT listener on ``host`` and ``port``, unnamed.
    listeners: tuple[ServedListener, ...] = ()


def _int_value(key: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(str(raw).strip(), 10)
    except ValueError:
        raise ConfigError(f"{key} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{key}={value} is out of range [{low}, {high}]")
    return value


def _validate_broker(props: dict[str, str]) -> dict[str, str]:
    """The broker keys normalised (defaults filled in); ConfigError for unknown/bad ones."""
    from coordinator.broker import config as broker_config
    known: Mapping[str, str] = broker_config.BROKER_CONFIG_DEFAULTS
    optional: frozenset[str] = broker_config.OPTIONAL_KEYS
    for key in props:
        if key not in known and key not in optional:
            everything = [*known, *optional, *COORDINATOR_KEYS, *SERVER_KEYS,
                          *IGNORED_BROKER_KEYS]
            import difflib  # only for a refused key: not on every start

            close = difflib.get_close_matches(key, everything, n=1, cutoff=0.8)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"unknown configuration key {key!r}{hint}")
    try:
        return dict(broker_config.validate_broker_config(props))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _listener_fields(properties: Mapping[str, str], kwargs: dict[str, Any],
                     sasl_users: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The ``listeners`` key (and its SASL and TLS keys) as ServeOptions fields; ``kwargs``'
    host and port (None: not given) may not be given beside it."""
    for key in ("host", "port"):
        if kwargs.get(key, 0) is None:
            del kwargs[key]
    if "listeners" not in properties:
        check_listener_names(properties, ())
        for key in ("advertised.listeners", "listener.security.protocol.map"):
            if key in properties:
                log.warning("configuration key %s applies to the listeners key, which is not "
                            "set; ignored", key)
        if sasl_users:
            raise ConfigError("--sasl-user needs a SASL listener "
                              "(listeners=SASL_PLAINTEXT://HOST:PORT)")
        return {}
    if "host" in kwargs or "port" in kwargs:
        raise ConfigError("--host/--port cannot be given with listeners (the listener "
                          "names the address)")
    listeners = parse_listeners(properties)
    check_listener_names(properties, listeners)
    if sasl_users and not any(listener.sasl for listener in listeners):
        raise ConfigError("--sasl-user needs a SASL listener "
                          "(listeners=SASL_PLAINTEXT://HOST:PORT)")
    contexts: dict[str, Any] = {}
    if any(listener.tls for listener in listeners):  # ssl contexts only for TLS listeners
        from coordinator.server.tls_listener import tls_contexts

        contexts = tls_contexts(properties, listeners,
                                kwargs.get("data_dir", ServeOptions.data_dir))
    served = tuple(_served(properties, listener, sasl_users, *contexts.get(listener.name,
                                                                          (None, None)))
                   for listener in listeners)
    return {"host": listeners[0].host, "port": listeners[0].port, "listeners": served}


def _served(properties: Mapping[str, str], listener: Listener,
            sasl_users: tuple[tuple[str, str], ...], tls: Any,
            generated_ca: str | None) -> ServedListener:
    """One listener's SASL mechanisms (``coordinator.security`` is imported only for a
    SASL listener) beside its TLS context (None: not a TLS listener)."""
    mechanisms = None
    if listener.sasl:
        from coordinator.server.sasl_listener import sasl_mechanisms

        mechanisms = sasl_mechanisms(sasl_settings(properties, listener, sasl_users))
    return ServedListener(listener, mechanisms, tls, generated_ca)


def build_options(properties: Mapping[str, str], *,
                  sasl_users: tuple[tuple[str, str], ...] = (), **kwargs: Any) -> ServeOptions:
    """ServeOptions from Kafka-named ``properties`` plus keyword fields (``host``/``port``
    None: not given); ConfigError if a key is unknown or a value bad."""
    validate_authorizer(properties)
    coordinator: dict[str, str] = {}
    broker: dict[str, str] = {}
    server: dict[str, int] = {}
    for key, raw in properties.items():
        if is_listener_key(key) or key in AUTHORIZER_KEYS:
            continue
        if key in COORDINATOR_KEYS:
            coordinator[key] = raw
        elif key in SERVER_KEYS:
            low, high = SERVER_KEYS[key]
            server[key] = _int_value(key, raw, low, high)
        elif key in IGNORED_BROKER_KEYS:
            log.warning("configuration key %s does not apply to kcoord (brokers in one "
                        "process share one log); ignored", key)
        else:
            broker[key] = raw
    config = CoordinatorConfig.from_properties(coordinator)
    broker_config = _validate_broker(broker)
    # Last: a TLS listener may generate its certificates once everything else is valid.
    kwargs.update(_listener_fields(properties, kwargs, sasl_users))
    idle = server.get("connections.max.idle.ms", DEFAULT_CONNECTIONS_MAX_IDLE_MS)
    return ServeOptions(
        coordinator_config=config,
        properties=dict(properties),
        broker_config=broker_config,
        socket_request_max_bytes=server.get(
            "socket.request.max.bytes", DEFAULT_SOCKET_REQUEST_MAX_BYTES
        ),
        connections_max_idle_ms=idle,
        queued_max_request_bytes=server.get(
            "queued.max.request.bytes", DEFAULT_QUEUED_MAX_REQUEST_BYTES
        ),
        max_connections=server.get("max.connections", _INT_MAX),
        max_open_segment_files=server.get(MAX_OPEN_SEGMENT_FILES,
                                          DEFAULT_MAX_OPEN_SEGMENT_FILES),
        queued_max_response_bytes=server.get("kcoord.queued.max.response.bytes",
                                             DEFAULT_QUEUED_MAX_RESPONSE_BYTES),
        socket_send_buffer_bytes=server.get("socket.send.buffer.bytes", -1),
        socket_send_timeout_ms=server.get("socket.send.timeout.ms", DEFAULT_SEND_TIMEOUT_MS),
        default_replication_factor=server.get("default.replication.factor", 1),
        coordinator_load_delay_ms=server.get("coordinator.load.delay.ms", 0),
        **kwargs,
    )


_INTERNAL_TOPIC_PARTITIONS = {OFFSETS_TOPIC: "offsets.topic.num.partitions",
                              TRANSACTION_STATE_TOPIC: "transaction.state.log.num.partitions"}
_TOPIC_RE = re.compile(r"^([A-Za-z0-9._-]{1,249})(?::(\d+))?$")


def parse_topic(text: str) -> tuple[str, int | None]:
    """``NAME[:PARTITIONS]`` -> (name, partitions or None); ConfigError when malformed."""
    match = _TOPIC_RE.match(text)
    if match is None or match.group(1) in (".", ".."):
        raise ConfigError(
            f"--topic {text!r}: expected NAME[:PARTITIONS], NAME of letters, digits, '.', '_', '-'"
        )
    if match.group(1) in _INTERNAL_TOPIC_PARTITIONS:
        raise ConfigError(
            f"--topic {text!r}: {match.group(1)} is an internal topic, kept by the coordinator"
            f" (set its partition count with {_INTERNAL_TOPIC_PARTITIONS[match.group(1)]})"
        )
    partitions = match.group(2)
    if partitions is None:
        return match.group(1), None
    count = int(partitions)
    if not 1 <= count <= 100_000:
        raise ConfigError(f"--topic {text!r}: partitions must be between 1 and 100000")
    return match.group(1), count


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """java.util.Properties lines: comments dropped, backslash continuations joined."""
    lines: list[tuple[int, str]] = []
    pending: str | None = None
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip(" \t\f")
        if pending is None:
            if not line or line[0] in "#!":
                continue
            start = number
            pending = ""
        pending += line
        trailing = len(pending) - len(pending.rstrip("\\"))
        if trailing % 2 == 1:
            pending = pending[:-1]
            continue
        lines.append((start, pending))
        pending = None
    if pending is not None:
        lines.append((start, pending))
    return lines


def parse_properties(text: str, source: str = "properties") -> dict[str, str]:
    """Parse Kafka's ``server.properties`` syntax (java.util.Properties): ``key=value``,
    ``key: value`` or ``key value``; ``#``/``!`` comments; backslash escapes/continuations."""
    props: dict[str, str] = {}
    for number, line in _logical_lines(text):
        i = 0
        while i < len(line):
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        if i < len(line) and line[i] in "=:":
            rest = line[i + 1 :].lstrip(" \t\f")
        else:
            rest = line[i:].lstrip(" \t\f")
            if rest[:1] in ("=", ":"):
                rest = rest[1:].lstrip(" \t\f")
        key = _unescape(key)
        if not key:
            raise ConfigError(f"{source}:{number}: a line without a key")
        props[key] = _unescape(rest).rstrip()
    return props
