"""What ``serve`` needs to know, and how Kafka-style configuration becomes that.

Configuration keys use Kafka's names, each defined once in ``coordinator.configs.broker_keys``
with the part of kcoord that reads it: the group coordinator's keys go to
``CoordinatorConfig``, the server's (network, cluster, files) to :class:`ServeOptions` fields
of the same name (``kcoord.`` dropped), the broker surface's and the transaction
coordinator's to ``validate_broker_config``; Kafka keys that mean nothing for one process are
accepted with a warning, any other key refused. Every refusal is a one-line
:class:`ConfigError`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from coordinator.config import ConfigError, CoordinatorConfig
from coordinator.configs.broker_keys import SERVER_PROPERTIES, keys_read_by
from coordinator.configs.config_key import KAFKA_DEFAULT, Reader, kafka_defaults
from coordinator.configs.security_keys import AUTHORIZER_KEYS
from coordinator.server.listeners import (
    Listener,
    ServedListener,
    check_listener_names,
    is_listener_key,
    parse_listeners,
    sasl_settings,
)
from coordinator.server.security_setup import validate_authorizer
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

#: The server's keys (network, cluster, files), with their accepted ranges.
SERVER_KEYS: dict[str, tuple[int, int]] = {
    name: key.bounds for name, key in keys_read_by(Reader.SERVER).items()}
MAX_OPEN_SEGMENT_FILES = "kcoord.max.open.segment.files"
#: Kafka broker keys a real ``server.properties`` carries that mean nothing for one kcoord
#: process: accepted with one warning each, so an existing configuration file works.
IGNORED_BROKER_KEYS = frozenset(keys_read_by(Reader.IGNORED))
_GROUP_KEYS = frozenset(keys_read_by(Reader.GROUPS))
_BROKER_KEYS = frozenset(keys_read_by(Reader.BROKER, Reader.TRANSACTIONS))


def _server_default(name: str) -> int:
    return int(SERVER_PROPERTIES[name].typed_default)


DEFAULT_SOCKET_REQUEST_MAX_BYTES = _server_default("socket.request.max.bytes")
DEFAULT_CONNECTIONS_MAX_IDLE_MS = _server_default("connections.max.idle.ms")
DEFAULT_QUEUED_MAX_REQUEST_BYTES = _server_default("queued.max.request.bytes")
DEFAULT_MAX_OPEN_SEGMENT_FILES = _server_default(MAX_OPEN_SEGMENT_FILES)
DEFAULT_QUEUED_MAX_RESPONSE_BYTES = _server_default("kcoord.queued.max.response.bytes")

log = logging.getLogger(__name__)



@dataclass(frozen=True)
@kafka_defaults({name.removeprefix("kcoord."): key for name, key in SERVER_PROPERTIES.items()})
class ServeOptions:
    """Everything ``coordinator.server.app.serve`` needs; a field defaulting to
    ``KAFKA_DEFAULT`` is the server key of its name (``kcoord.`` dropped)."""

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
    socket_request_max_bytes: int = KAFKA_DEFAULT
    connections_max_idle_ms: int = KAFKA_DEFAULT
    #: All partially received requests together (bytes; -1: unbounded).
    queued_max_request_bytes: int = KAFKA_DEFAULT
    #: ``max.connections``: connections beyond it are closed at once.
    max_connections: int = KAFKA_DEFAULT
    #: ``kcoord.max.open.segment.files``: descriptors the partition logs keep open.
    max_open_segment_files: int = KAFKA_DEFAULT
    #: ``kcoord.queued.max.response.bytes``: all answers being written (-1: unbounded).
    queued_max_response_bytes: int = KAFKA_DEFAULT
    #: ``socket.send.buffer.bytes``: SO_SNDBUF of each connection (-1: the OS default).
    socket_send_buffer_bytes: int = KAFKA_DEFAULT
    #: ``socket.send.timeout.ms``: how long an answer may wait for its reader.
    socket_send_timeout_ms: int = KAFKA_DEFAULT
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
    default_replication_factor: int = KAFKA_DEFAULT
    #: Called with (node id, host, port, listener name) for each listener of each broker
    #: after the first (``--brokers``).
    on_broker_listening: Any = None
    coordinator_load_delay_ms: int = KAFKA_DEFAULT
    #: The ``listeners`` key's listeners, in order (``host`` and ``port`` are the first
    #: one's); empty: one PLAINTEXT listener on ``host`` and ``port``, unnamed.
    listeners: tuple[ServedListener, ...] = ()


#: The server keys that are ServeOptions fields: key -> field name (``kcoord.`` dropped).
_SERVER_FIELDS = {key: name for key in SERVER_KEYS
                  if (name := key.removeprefix("kcoord.").replace(".", "_"))
                  in {f.name for f in fields(ServeOptions)}}


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
    for key in props:
        if key not in _BROKER_KEYS:
            everything = [name for name, known in SERVER_PROPERTIES.items()
                          if known.reader not in (None, Reader.LISTENERS)]
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
    server: dict[str, Any] = {}  # (ServeOptions fields: integers)
    for key, raw in properties.items():
        if is_listener_key(key) or key in AUTHORIZER_KEYS:
            continue
        if key in _GROUP_KEYS:
            coordinator[key] = raw
        elif key in SERVER_KEYS:
            low, high = SERVER_KEYS[key]
            value = _int_value(key, raw, low, high)
            if key in _SERVER_FIELDS:  # (the others are read from the properties)
                server[_SERVER_FIELDS[key]] = value
        elif key in IGNORED_BROKER_KEYS:
            log.warning("configuration key %s does not apply to kcoord (brokers in one "
                        "process share one log); ignored", key)
        else:
            broker[key] = raw
    config = CoordinatorConfig.from_properties(coordinator)
    broker_config = _validate_broker(broker)
    # Last: a TLS listener may generate its certificates once everything else is valid.
    kwargs.update(_listener_fields(properties, kwargs, sasl_users))
    return ServeOptions(coordinator_config=config, properties=dict(properties),
                        broker_config=broker_config, **server, **kwargs)


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
