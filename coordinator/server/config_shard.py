"""Dynamic configs in the coordinator runtime: the shard that writes ConfigRecords and client
quota records and applies them once durable (``coordinator.configs.store``,
``coordinator.configs.client_quotas``), and what applying them does here.

- A topic's configs are its ``Topic.configs`` (read live by Produce, retention and the log
  cleaner); a record applies only to the topic whose id it carries.
- Broker configs: each broker's config dict (``Server.config``; ``--brokers N`` gives each
  its own) becomes the static config overlaid with the cluster-wide default and then that
  broker's dynamic configs (``BROKER`` resource ``"N"``), so every reader of
  ``ctx.state.config`` on that broker sees a change at once.
- Group configs: the group coordinator reads them (``GroupManager.group_configs``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import trio

from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import TopicStore, validate_topic_name
from coordinator.configs.client_quotas import ClientQuotas
from coordinator.configs.quota_rates import QuotaRates
from coordinator.configs.store import (
    BROKER,
    AlterOp,
    ConfigError,
    DynamicConfigs,
    GroupBounds,
    check_keys,
)
from coordinator.core.result import EMPTY_RESULT, Reply, Result, ShardResponse
from coordinator.server.api_support import group_runtime
from coordinator.server.broker_loggers import alter_logger_levels
from storage.config_records import ClientQuotaRecordKey, ConfigRecordKey
from storage.records import Record
from wire.constants import AlterConfigOpType, ErrorCode

if TYPE_CHECKING:
    import wire
    from coordinator.server.context import RequestContext
    from coordinator.server.runtime import CoordinatorRuntime

__all__ = ["ConfigShard", "StoreTopics", "alter_configs", "attach_configs",
           "call_config_shard", "handle_alter_configs"]


class StoreTopics:
    """The topic store as ``coordinator.configs.store.TopicDirectory``."""

    def __init__(self, store: TopicStore | None) -> None:
        self.store = store

    def topic_configs(self, name: str) -> tuple[object, Mapping[str, str]] | None:
        topic = None if self.store is None else self.store.get(name)
        return None if topic is None else (topic.topic_id, topic.configs)

    def illegal_name(self, name: str) -> str | None:
        try:
            validate_topic_name(name)
        except BrokerError as exc:
            return exc.message
        return None

    def set_topic_config(self, name: str, topic_id: object, key: str, value: str | None) -> None:
        topic = None if self.store is None else self.store.get(name)
        if topic is None or topic.topic_id != topic_id:
            return  # a record of a deleted topic of that name
        if value is None:
            topic.configs.pop(key, None)
        else:
            topic.configs[key] = value


class ConfigShard:
    """The runtime's shard of dynamic configs (``coordinator.server.shard.Shard``)."""

    def __init__(self, store: DynamicConfigs, quotas: ClientQuotas | None = None) -> None:
        self.store = store
        self.quotas = ClientQuotas() if quotas is None else quotas
        #: The byte-rate quotas' measured rates (``coordinator.server.throttling``).
        self.throttles = QuotaRates(self.quotas)
        #: Held while an alter request is planned, written and applied, so the next one
        #: plans on state that includes it (Kafka's controller plans on uncommitted state).
        self.lock = trio.Lock()

    def replay(self, record: Record) -> None:
        if isinstance(record.key, ClientQuotaRecordKey):
            self.quotas.apply(record)
        else:
            self.store.apply(record)

    def on_loaded(self, now_ms: int) -> Result:
        """The controller's activation records: ELR's safety configs
        (``DynamicConfigs.elr_safety_records``), applied once durable."""
        return Result(records=tuple(self.store.elr_safety_records()))

    def append_done(self, result: Result, now_ms: int) -> Result:
        for record in result.records:
            self.replay(record)
        return EMPTY_RESULT

    def append_failed(self, result: Result, error: ErrorCode, now_ms: int) -> Result:
        """Nothing was applied: every resource (quota entity) answered without an error
        gets ``error``."""
        replies = []
        for token, response in result.replies:
            answer = dict(cast(dict[str, Any], response))
            listed = "entries" if "entries" in answer else "responses"
            answer[listed] = [
                {**r, "error_code": error, "error_message": None}
                if r["error_code"] == ErrorCode.NONE else r
                for r in answer[listed]]
            replies.append(Reply(token, cast(ShardResponse, answer)))
        return Result(replies=tuple(replies))

    def fire_timer(self, key: Any, now_ms: int) -> Result:
        return EMPTY_RESULT


def _plan(store: DynamicConfigs, incremental: bool, resource: Any,
          node_id: int | None, validate_only: bool) -> list[Record]:
    kind, name = resource.resource_type, resource.resource_name
    if incremental and kind == _BROKER_LOGGER:  # applied at once, never persisted (KIP-412)
        ops = [(c.name, c.config_operation, c.value) for c in resource.configs]
        check_keys([n for n, _, _ in ops], [n for n, op, v in ops
                                              if op != AlterConfigOpType.DELETE and v is None])
        alter_logger_levels(store.node_id if node_id is None else node_id, name, ops,
                            validate_only)
        return []
    if incremental:
        return store.incremental(kind, name, [AlterOp(c.name, c.config_operation, c.value)
                                              for c in resource.configs], node_id)
    names = [c.name for c in resource.configs]
    return store.legacy(kind, name, {c.name: c.value for c in resource.configs}, names,
                        node_id)


def alter_configs(shard: ConfigShard, ctx: Any, request: Any, token: Any, now_ms: int) -> Result:
    """AlterConfigs (legacy: every key of a resource replaced) or IncrementalAlterConfigs:
    each resource planned on its own (Kafka's per-resource answers), its records written
    unless ``validate_only``; the answer goes out once they are durable."""
    body = request.body
    incremental = request.api_key == _INCREMENTAL_ALTER_CONFIGS
    # The broker the request reached: its id names its own BROKER resource.
    node_id = None if ctx is None else ctx.state.identity.node_id
    seen: dict[tuple[int, str], int] = {}
    for resource in body.resources:
        ident = (resource.resource_type, resource.resource_name)
        seen[ident] = seen.get(ident, 0) + 1
    records: list[Record] = []
    responses = []
    for resource in body.resources:
        code, message = ErrorCode.NONE, None
        try:
            if seen[(resource.resource_type, resource.resource_name)] > 1:
                raise ConfigError(ErrorCode.INVALID_REQUEST,
                                  "Each resource must appear at most once.")
            planned = _plan(shard.store, incremental, resource, node_id,
                            bool(body.validate_only))
            if not body.validate_only:
                records += planned
        except ConfigError as exc:
            code, message = exc.code, exc.message
        responses.append({"error_code": code, "error_message": message,
                          "resource_type": resource.resource_type,
                          "resource_name": resource.resource_name})
    response = {"throttle_time_ms": 0, "responses": responses}
    return Result(tuple(records), (Reply(token, cast(ShardResponse, response)),))


_INCREMENTAL_ALTER_CONFIGS = 44
_BROKER_LOGGER = 8


async def call_config_shard(ctx: RequestContext, handler: Callable[..., Result],
                            request: Any) -> dict[str, Any]:
    """Run ``handler`` on the config shard, one plan at a time (each plan sees the changes
    of the one before applied: Kafka's controller plans on uncommitted state); its answer
    once its records are durable."""
    runtime = group_runtime(ctx)
    shard = runtime.configs
    assert isinstance(shard, ConfigShard)
    async with shard.lock:
        response: dict[str, Any] = await runtime.call(handler, ctx, request, shard)
    return response


async def handle_alter_configs(ctx: RequestContext,
                               request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The handler of AlterConfigs and IncrementalAlterConfigs: each resource's result,
    once its records are durable."""
    return await call_config_shard(ctx, alter_configs, request)


def _broker_effects(store: DynamicConfigs, node_id: int,
                    config: dict[str, str]) -> Callable[[ConfigRecordKey], None]:
    """Keeps broker ``node_id``'s ``config`` the static config, then the cluster-wide
    default, then its own dynamic configs."""
    def on_record(key: ConfigRecordKey) -> None:
        if key.resource_type != BROKER or key.resource_name not in ("", str(node_id)):
            return
        effective = dict(store.static_config)
        effective.update(store.brokers.get("", {}))
        effective.update(store.brokers.get(str(node_id), {}))
        config.clear()
        config.update(effective)

    return on_record


def attach_configs(runtime: CoordinatorRuntime, topics: TopicStore | None,
                   configs: Mapping[int, dict[str, str]], node_id: int) -> ConfigShard:
    """The config shard of a loaded runtime: its records replayed, its effects wired.
    ``configs``: each broker's config dict by node id (``node_id``'s holds the static
    config)."""
    group_config = runtime.coordinator.config
    store = DynamicConfigs(
        node_id, StoreTopics(topics), static_config=configs[node_id],
        group_bounds=GroupBounds(group_config.group_consumer_min_session_timeout_ms,
                                 group_config.group_consumer_max_session_timeout_ms,
                                 group_config.group_consumer_min_heartbeat_interval_ms,
                                 group_config.group_consumer_max_heartbeat_interval_ms))
    store.listeners.extend(_broker_effects(store, node, config)
                           for node, config in configs.items())
    runtime.coordinator.group_configs = store.groups
    shard = ConfigShard(store)
    runtime.attach_configs(shard)
    return shard
