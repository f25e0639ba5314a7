"""DescribeConfigs (key 32), versions 0-4: what admin clients read back of a topic's, a
broker's and a group's configuration, as Kafka's ``ConfigHelper`` answers
(``coordinator.server.config_entries`` layers each key's sources and synonyms).

- Topic (resource type 2): every topic-level config Kafka defines (``LogConfig``), a value
  the topic was created or altered with being DYNAMIC_TOPIC_CONFIG (1), the others following
  their broker synonyms (``retention.ms`` <- ``log.retention.ms/minutes/hours``,
  ``max.message.bytes`` <- ``message.max.bytes``: DYNAMIC_BROKER_CONFIG 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG 3, STATIC_BROKER_CONFIG 4) or Kafka's default
  (DEFAULT_CONFIG 5); the internal topics report the configs Kafka creates them with
  (``cleanup.policy=compact``). An illegal name is INVALID_TOPIC_EXCEPTION, an unknown topic
  UNKNOWN_TOPIC_OR_PARTITION.
- Broker (resource type 4), named by this broker's node id: the server's configuration and
  every broker key kcoord defines, as Kafka's every ``KafkaConfig`` key (``read_only``
  unless dynamic), each from its layers. The keys clients read (``listeners``,
  ``advertised.listeners``, ``node.id``, ``broker.id``, ``log.dirs``, ``process.roles``)
  are this process's: its bound and advertised address, node id and data directory, a
  combined ``broker,controller`` node.
  The empty name (the cluster-wide dynamic defaults) has those set dynamically (source 3).
  Another id, or a name that is not a number, is INVALID_REQUEST.
- Group (resource type 32): every ``GroupConfig`` key, the group's own value being
  GROUP_CONFIG (8), else the value and source of the broker key it follows
  (``group.<key>``: STATIC_BROKER_CONFIG when the server was given it, else DEFAULT_CONFIG),
  whose layers are the key's synonyms (``createGroupConfigEntry``).
- Broker logger (resource type 8, KIP-412), named by this broker's node id: ``root`` and
  every logger of the process with its level in log4j's names, DYNAMIC_BROKER_LOGGER_CONFIG
  (6), as ``Log4jController.loggers`` (``coordinator.server.broker_loggers``).
- Any other resource type: INVALID_REQUEST.

``configuration_keys`` (null or empty: all) selects names; v0 answers ``is_default``, v1+
``config_source`` and, with ``include_synonyms``, the layers as synonyms; v3+
``config_type`` (Kafka's ConfigType ids) for every key and, with ``include_documentation``,
each key's documentation (a broker key's, static or dynamic, from ``broker_keys``; a
``listener.name.<name>.`` override's from its base key). A PASSWORD key, or one kcoord does
not define (type UNKNOWN), is sensitive: no value (``KafkaConfig.maybeSensitive``); the
secrets a server was started with are listed so, as Kafka's. Asked while the server loads,
it answers once the dynamic configs are replayed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import validate_topic_name
from coordinator.configs.definitions import BROKER_KEYS, SERVER_PROPERTIES, TOPIC_KEYS, broker_key
from coordinator.server.api_support import store_of
from coordinator.server.broker_loggers import logger_levels
from coordinator.server.config_entries import ConfigView, entry
from coordinator.server.internal_topics import CREATION_CONFIGS, is_internal
from coordinator.server.route import AclOperation, Route, config_resource_acls
from wire import ErrorCode
from wire.constants import ApiKey, ConfigResourceType, ConfigSource, ConfigType

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "TOPIC_CONFIG_DEFAULTS", "handle"]


#: Kafka 4's topic-level configs: name -> (default, ConfigType id).
TOPIC_CONFIG_DEFAULTS: dict[str, tuple[str | None, int]] = {
    name: (key.default, int(key.type)) for name, key in TOPIC_KEYS.items()}


def _topic_configs(ctx: RequestContext, view: ConfigView, name: str, synonyms: bool,
                   docs: bool) -> list[dict[str, Any]]:
    validate_topic_name(name)  # INVALID_TOPIC_EXCEPTION
    topic = store_of(ctx).get(name)
    if is_internal(name):  # created by Kafka with these configs
        overrides = CREATION_CONFIGS[name]
    elif topic is None:
        raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          "The topic does not exist or this server does not host it.")
    else:
        overrides = topic.configs
    return view.topic_entries(overrides, synonyms, docs)


def _broker_id(name: str) -> int:
    """ConfigHelper's ``resourceNameToBrokerId``."""
    try:
        return int(name)
    except ValueError:
        raise BrokerError(ErrorCode.INVALID_REQUEST,
                          f"Broker id must be an integer, but it is: {name}") from None


def _broker_configs(ctx: RequestContext, view: ConfigView, name: str, synonyms: bool,
                    docs: bool) -> list[dict[str, Any]]:
    if name == "":  # the cluster-wide dynamic defaults
        return view.default_entries(synonyms, docs)
    if _broker_id(name) != ctx.state.identity.node_id:
        raise BrokerError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {ctx.state.identity.node_id} or empty string, "
            f"but received {name}",
        )
    process = _process_configs(ctx)
    keys = (set(view.static) | view.explicit | set(SERVER_PROPERTIES) | set(view.dynamic(name))
            | set(view.dynamic(""))) - set(process)
    entries = {e["name"]: e for e in view.broker_entries(keys, synonyms, docs)}
    for key, (value, source) in process.items():
        entries[key] = entry(key, [(key, value, source)], broker_key(key),
                             key not in BROKER_KEYS, synonyms, docs)
    return [entries[key] for key in sorted(entries)]


def _process_configs(ctx: RequestContext) -> dict[str, tuple[str | None, int]]:
    """The broker keys clients read, as this process has them: name -> (value, source).
    A KRaft server.properties always sets listeners, node.id and process.roles
    (this process always has them: STATIC_BROKER_CONFIG); advertised.listeners is static
    when given, log.dirs when there is a data directory (in memory: null, the default)."""
    identity = ctx.state.identity
    bind_host = ctx.state.bind_host
    static = ConfigSource.STATIC_BROKER_CONFIG
    advertised = static if ctx.state.advertised_given else ConfigSource.DEFAULT_CONFIG
    data_dir = ctx.state.data_dir
    node_id = str(identity.node_id)
    listeners = f"PLAINTEXT://{bind_host}:{identity.port}"
    advertised_listeners = f"PLAINTEXT://{identity.host}:{identity.port}"
    if identity.endpoints:  # the listeners key, as given; each listener's advertised address
        listeners = ctx.state.config.get("listeners", listeners)
        advertised_listeners = ",".join(f"{name}://{host}:{port}"
                                        for name, host, port in identity.endpoints)
        if "advertised.listeners" in ctx.state.config:
            advertised = static
    return {
        "listeners": (listeners, static),
        "advertised.listeners": (advertised_listeners, advertised),
        "node.id": (node_id, static),
        "broker.id": (node_id, static),
        "log.dirs": ((os.path.abspath(data_dir), static) if data_dir is not None
                     else (None, ConfigSource.DEFAULT_CONFIG)),
        "process.roles": ("broker,controller", static),
    }


def _logger_configs(ctx: RequestContext, name: str) -> list[dict[str, Any]]:
    """ConfigHelper's BROKER_LOGGER case: this broker's loggers."""
    if not name:
        raise BrokerError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    if _broker_id(name) != ctx.state.identity.node_id:
        raise BrokerError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected "
                          f"{ctx.state.identity.node_id} but received {name}")
    return [{"name": logger, "value": level, "read_only": False, "is_default": False,
             "config_source": ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG, "is_sensitive": False,
             "synonyms": [], "config_type": ConfigType.UNKNOWN, "documentation": None}
            for logger, level in logger_levels().items()]


def _describe(ctx: RequestContext, view: ConfigView, resource: Any, synonyms: bool,
              docs: bool) -> dict[str, Any]:
    kind, name = resource.resource_type, resource.resource_name
    result: dict[str, Any] = {"error_code": ErrorCode.NONE, "error_message": None,
                              "resource_type": kind, "resource_name": name, "configs": []}
    try:
        if kind == ConfigResourceType.TOPIC:
            configs = _topic_configs(ctx, view, name, synonyms, docs)
        elif kind == ConfigResourceType.BROKER:
            configs = _broker_configs(ctx, view, name, synonyms, docs)
        elif kind == ConfigResourceType.BROKER_LOGGER:
            configs = _logger_configs(ctx, name)
        elif kind == ConfigResourceType.GROUP and name:
            configs = view.group_entries(name, synonyms, docs)
        elif kind == ConfigResourceType.GROUP:
            raise BrokerError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        else:
            raise BrokerError(ErrorCode.INVALID_REQUEST,
                              f"Unsupported resource type {kind} for DescribeConfigs")
    except BrokerError as exc:
        return {**result, "error_code": exc.code, "error_message": exc.message}
    wanted = resource.configuration_keys
    if wanted:  # Kafka's createResponseConfig: null or empty selects every key
        keys = set(wanted)
        configs = [c for c in configs if c["name"] in keys]
    return {**result, "configs": configs}


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each resource's configs, or its error."""
    loaded = ctx.state.loaded
    if not loaded.is_set():
        # Dynamic configs are known once the metadata log is replayed: answer after it,
        # never with configs a restart has not restored yet.
        await loaded.wait()
    body = request.body
    version = request.api_version
    synonyms = bool(version >= 1 and body.include_synonyms)
    docs = bool(version >= 3 and body.include_documentation)
    view = ConfigView(ctx)
    return {"throttle_time_ms": 0,
            "results": [_describe(ctx, view, r, synonyms, docs) for r in body.resources]}


ROUTE = Route(
    ApiKey.DESCRIBE_CONFIGS,
    handle,
    acl=config_resource_acls(AclOperation.DESCRIBE_CONFIGS),
)
