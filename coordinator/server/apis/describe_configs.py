"""DescribeConfigs (key 32), versions 0-4: what admin clients read back of a topic's and
the broker's configuration, as Kafka's ``ConfigHelper`` answers.

- Topic (resource type 2): every topic-level config Kafka lists, with Kafka's defaults
  (``max.message.bytes``, ``retention.ms``, ``retention.bytes`` and ``segment.bytes``
  follow the broker's ``message.max.bytes``, ``log.retention.*`` and
  ``log.segment.bytes``); one the topic was
  created with is source DYNAMIC_TOPIC_CONFIG (1), the others DEFAULT_CONFIG (5); the
  internal topics report the configs Kafka creates them with (``cleanup.policy=compact``).
  An
  illegal name is INVALID_TOPIC_EXCEPTION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
- Broker (resource type 4), named by this broker's node id: the server's configuration
  (Kafka's names), a key given on the command line or in a properties file being
  STATIC_BROKER_CONFIG (4), the rest DEFAULT_CONFIG; every broker config is read-only
  here (there are no dynamic broker configs). The keys clients read (``listeners``,
  ``advertised.listeners``, ``node.id``, ``broker.id``, ``log.dirs``, ``process.roles``)
  are this process's: its bound and advertised address, node id and data directory, a
  combined ``broker,controller`` node. The empty name (the cluster-wide dynamic
  defaults) has none. Another id, or a name that is not a number, is INVALID_REQUEST.
- Any other resource type: INVALID_REQUEST.

``configuration_keys`` (null: all) selects names; v0 answers ``is_default``, v1+
``config_source`` and, with ``include_synonyms``, the config itself as its one synonym;
v3+ ``config_type`` (Kafka's ConfigType ids).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker import config as broker_config
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import validate_topic_name
from coordinator.server.api_support import store_of
from coordinator.server.internal_topics import CREATION_CONFIGS, is_internal
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "TOPIC_CONFIG_DEFAULTS", "handle"]

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4

# DescribeConfigsResponse.ConfigSource
DYNAMIC_TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# ConfigDef.Type as DescribeConfigs v3+ numbers it
_BOOLEAN, _STRING, _INT, _LONG, _DOUBLE, _LIST = 1, 2, 3, 5, 6, 7
_LONG_MAX = str(2**63 - 1)

#: Kafka 4's topic-level configs: name -> (default, ConfigType id).
TOPIC_CONFIG_DEFAULTS: dict[str, tuple[str, int]] = {
    "cleanup.policy": ("delete", _LIST),
    "compression.type": ("producer", _STRING),
    "delete.retention.ms": ("86400000", _LONG),
    "file.delete.delay.ms": ("60000", _LONG),
    "flush.messages": (_LONG_MAX, _LONG),
    "flush.ms": (_LONG_MAX, _LONG),
    "index.interval.bytes": ("4096", _INT),
    "max.compaction.lag.ms": (_LONG_MAX, _LONG),
    "max.message.bytes": ("1048588", _INT),
    "message.timestamp.after.max.ms": (_LONG_MAX, _LONG),
    "message.timestamp.before.max.ms": (_LONG_MAX, _LONG),
    "message.timestamp.type": ("CreateTime", _STRING),
    "min.cleanable.dirty.ratio": ("0.5", _DOUBLE),
    "min.compaction.lag.ms": ("0", _LONG),
    "min.insync.replicas": ("1", _INT),
    "preallocate": ("false", _BOOLEAN),
    "retention.bytes": ("-1", _LONG),
    "retention.ms": ("604800000", _LONG),
    "segment.bytes": ("1073741824", _INT),
    "segment.index.bytes": ("10485760", _INT),
    "segment.jitter.ms": ("0", _LONG),
    "segment.ms": ("604800000", _LONG),
    "unclean.leader.election.enable": ("false", _BOOLEAN),
}


def _entry(name: str, value: str | None, source: int, config_type: int, read_only: bool,
           synonyms: bool) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "is_default": source == DEFAULT_CONFIG,
        "config_source": source,
        "is_sensitive": False,
        "synonyms": [{"name": name, "value": value, "source": source}] if synonyms else [],
        "config_type": config_type,
        "documentation": None,
    }


def _topic_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    validate_topic_name(name)  # INVALID_TOPIC_EXCEPTION
    topic = store_of(ctx).get(name)
    if is_internal(name):  # created by Kafka with these configs
        overrides = CREATION_CONFIGS[name]
    elif topic is None:
        raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          "The topic does not exist or this server does not host it.")
    else:
        overrides = topic.configs
    defaults = dict(TOPIC_CONFIG_DEFAULTS)
    broker = ctx.state.config
    defaults["max.message.bytes"] = (str(broker_config.message_max_bytes(broker)), _INT)
    defaults["retention.ms"] = (str(broker_config.retention_ms(broker)), _LONG)
    defaults["retention.bytes"] = (str(broker_config.retention_bytes(broker)), _LONG)
    defaults["segment.bytes"] = (str(broker_config.segment_bytes(broker)), _INT)
    out = []
    for key in sorted(set(defaults) | set(overrides)):
        config_type = defaults.get(key, ("", _STRING))[1]
        if key in overrides:
            out.append(_entry(key, overrides[key], DYNAMIC_TOPIC_CONFIG, config_type,
                              False, synonyms))
        else:
            out.append(_entry(key, defaults[key][0], DEFAULT_CONFIG, config_type, False,
                              synonyms))
    return out


def _broker_configs(ctx: RequestContext, name: str, synonyms: bool) -> list[dict[str, Any]]:
    if name == "":
        return []
    try:
        node_id = int(name)
    except ValueError:
        raise BrokerError(ErrorCode.INVALID_REQUEST,
                          f"Broker id must be an integer, but it is: {name}") from None
    if node_id != ctx.state.identity.node_id:
        raise BrokerError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {ctx.state.identity.node_id} or empty string, "
            f"but received {name}",
        )
    config: Mapping[str, str] = ctx.state.config
    explicit: frozenset[str] = getattr(ctx.state, "explicit_config_keys", frozenset())
    process = _process_configs(ctx)
    entries = {
        key: _entry(key, config[key],
                    STATIC_BROKER_CONFIG if key in explicit else DEFAULT_CONFIG,
                    _STRING, True, synonyms)
        for key in config if key not in process
    }
    for key, (value, source, config_type) in process.items():
        entries[key] = _entry(key, value, source, config_type, True, synonyms)
    return [entries[key] for key in sorted(entries)]


def _process_configs(ctx: RequestContext) -> dict[str, tuple[str | None, int, int]]:
    """The broker keys clients read, as this process has them: name -> (value, source,
    type). A KRaft server.properties always sets listeners, node.id and process.roles
    (this process always has them: STATIC_BROKER_CONFIG); advertised.listeners is static
    when given, log.dirs when there is a data directory (in memory: null, the default)."""
    identity = ctx.state.identity
    bind_host = getattr(ctx.state, "bind_host", identity.host)
    advertised = (STATIC_BROKER_CONFIG if getattr(ctx.state, "advertised_given", False)
                  else DEFAULT_CONFIG)
    data_dir: str | None = getattr(ctx.state, "data_dir", None)
    node_id = str(identity.node_id)
    listeners = f"PLAINTEXT://{bind_host}:{identity.port}"
    advertised_listeners = f"PLAINTEXT://{identity.host}:{identity.port}"
    if identity.endpoints:  # the listeners key, as given; each listener's advertised address
        listeners = ctx.state.config.get("listeners", listeners)
        advertised_listeners = ",".join(f"{name}://{host}:{port}"
                                        for name, host, port in identity.endpoints)
        if "advertised.listeners" in ctx.state.config:
            advertised = STATIC_BROKER_CONFIG
    return {
        "listeners": (listeners, STATIC_BROKER_CONFIG, _STRING),
        "advertised.listeners": (advertised_listeners, advertised, _STRING),
        "node.id": (node_id, STATIC_BROKER_CONFIG, _INT),
        "broker.id": (node_id, STATIC_BROKER_CONFIG, _INT),
        "log.dirs": ((os.path.abspath(data_dir), STATIC_BROKER_CONFIG, _STRING)
                     if data_dir is not None else (None, DEFAULT_CONFIG, _STRING)),
        "process.roles": ("broker,controller", STATIC_BROKER_CONFIG, _LIST),
    }


def _describe(ctx: RequestContext, resource: Any, synonyms: bool) -> dict[str, Any]:
    kind, name = resource.resource_type, resource.resource_name
    result: dict[str, Any] = {"error_code": ErrorCode.NONE, "error_message": None,
                              "resource_type": kind, "resource_name": name, "configs": []}
    try:
        if kind == TOPIC_RESOURCE:
            configs = _topic_configs(ctx, name, synonyms)
        elif kind == BROKER_RESOURCE:
            configs = _broker_configs(ctx, name, synonyms)
        else:
            raise BrokerError(ErrorCode.INVALID_REQUEST,
                              f"Unsupported resource type {kind} for DescribeConfigs")
    except BrokerError as exc:
        return {**result, "error_code": exc.code, "error_message": exc.message}
    wanted = resource.configuration_keys
    if wanted is not None:
        keys = set(wanted)
        configs = [c for c in configs if c["name"] in keys]
    return {**result, "configs": configs}


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each resource's configs, or its error."""
    body = request.body
    synonyms = bool(request.api_version >= 1 and body.include_synonyms)
    return {"throttle_time_ms": 0,
            "results": [_describe(ctx, r, synonyms) for r in body.resources]}


ROUTE = Route(
    ApiKey.DESCRIBE_CONFIGS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.DESCRIBE_CONFIGS, "topic resources"),
         Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE_CONFIGS, "broker resources")),
)
