"""The dynamic configs of topics, brokers and groups, and the records that change them
(Kafka's ``ConfigurationControlManager`` with the broker's ``ConfigAdminManager``
preprocessing, ``LogConfig.validate``, ``GroupConfig.validate`` and
``DynamicBrokerConfig.validateConfigs``).

Planning a change (``incremental``, ``legacy``) validates it and returns the ConfigRecords it
writes, changing nothing; ``apply`` changes state from one record, live (once the records are
durable) and at replay alike. A topic's configs live on the topic (its ``topic.json`` holds
the creation configs; records carry the topic id): ``TopicDirectory`` reads and writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from coordinator.configs.config_key import ConfigError
from coordinator.configs.definitions import (
    BROKER_KEYS,
    GROUP_KEYS,
    PER_BROKER_KEYS,
    SERVER_PROPERTIES,
    TOPIC_KEYS,
    InvalidConfig,
    known_keys,
    list_parts,
)
from storage.config_records import NO_TOPIC_ID, ConfigRecordKey, ConfigRecordValue
from storage.records import Record
from wire.constants import AlterConfigOpType, ConfigType, ErrorCode

__all__ = [
    "BROKER",
    "GROUP",
    "TOPIC",
    "AlterOp",
    "ConfigError",
    "DynamicConfigs",
    "GroupBounds",
    "TopicDirectory",
    "check_keys",
]

TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE, APPEND, SUBTRACT = (AlterConfigOpType.SET, AlterConfigOpType.DELETE,
                                 AlterConfigOpType.APPEND, AlterConfigOpType.SUBTRACT)


@dataclass(frozen=True, slots=True)
class AlterOp:
    """One IncrementalAlterConfigs entry."""

    name: str
    op: int
    value: str | None


def _group_default(name: str) -> int:
    return int(SERVER_PROPERTIES[f"group.consumer.{name}"].typed_default)


@dataclass(frozen=True, slots=True)
class GroupBounds:
    """The broker's bounds on a group's consumer timeouts (``GroupCoordinatorConfig``)."""

    min_session_ms: int = _group_default("min.session.timeout.ms")
    max_session_ms: int = _group_default("max.session.timeout.ms")
    min_heartbeat_ms: int = _group_default("min.heartbeat.interval.ms")
    max_heartbeat_ms: int = _group_default("max.heartbeat.interval.ms")


class TopicDirectory(Protocol):
    """The topics, as configs see them."""

    def topic_configs(self, name: str) -> tuple[object, Mapping[str, str]] | None:
        """(topic id, its configs), or None when there is no such topic."""

    def illegal_name(self, name: str) -> str | None:
        """Why ``name`` is no legal topic name (``Topic.validate``), or None."""

    def set_topic_config(self, name: str, topic_id: object, key: str, value: str | None) -> None:
        """Set (None: remove) one config of the topic ``name`` if its id is ``topic_id``."""


def check_keys(names: Sequence[str], nulls: Sequence[str]) -> None:
    """``ConfigAdminManager.preprocess``'s first checks of any resource: no key named twice,
    no null value but a DELETE's (``nulls``: the keys that have one)."""
    if len(set(names)) != len(names):
        raise _invalid_request("Error due to duplicate config keys")
    if nulls:
        raise _invalid_request(f"Null value not supported for : {', '.join(nulls)}")


def _invalid_request(message: str) -> ConfigError:
    return ConfigError(ErrorCode.INVALID_REQUEST, message)


def _invalid_config(message: str) -> ConfigError:
    return ConfigError(ErrorCode.INVALID_CONFIG, message)


def _scala_set(names: Iterable[str]) -> str:
    return f"Set({', '.join(sorted(names))})"


class DynamicConfigs:
    """Dynamic configs by resource, and their planning and replay (module docstring)."""

    def __init__(self, node_id: int, topics: TopicDirectory, *,
                 static_config: Mapping[str, str] | None = None,
                 group_bounds: GroupBounds = GroupBounds()) -> None:
        self.node_id = node_id
        self.topics = topics
        #: The broker's static config (its keys are non-dynamic unless in BROKER_KEYS).
        self.static_config: dict[str, str] = dict(static_config or {})
        self.group_bounds = group_bounds
        #: Broker resource name ("" cluster default, else a node id) -> its dynamic configs.
        self.brokers: dict[str, dict[str, str]] = {}
        #: Group id -> its dynamic configs (the group coordinator reads it).
        self.groups: dict[str, dict[str, str]] = {}
        #: Called with each applied record's key (effects: broker config, topics, groups).
        self.listeners: list[Callable[[ConfigRecordKey], None]] = []

    # ------------------------------------------------------------------ reading

    def configs(self, resource_type: int, name: str) -> dict[str, str]:
        """The dynamic configs of a resource (empty for an unknown one)."""
        if resource_type == TOPIC:
            found = self.topics.topic_configs(name)
            return {} if found is None else dict(found[1])
        table = self.brokers if resource_type == BROKER else self.groups
        return dict(table.get(name, {}))

    def resources(self, resource_type: int) -> list[str]:
        """Names of the broker or group resources that have dynamic configs."""
        table = self.brokers if resource_type == BROKER else self.groups
        return sorted(name for name, configs in table.items() if configs)

    # ------------------------------------------------------------------ planning

    def incremental(self, resource_type: int, name: str, ops: Sequence[AlterOp],
                    node_id: int | None = None) -> list[Record]:
        """The records an IncrementalAlterConfigs of one resource, sent to broker ``node_id``
        (this store's by default), writes; ConfigError."""
        self._preprocess(resource_type, name, [o.name for o in ops],
                         [o.name for o in ops if o.op != DELETE and o.value is None], node_id)
        for o in ops:
            if o.op not in AlterConfigOpType.__members__.values():
                raise _invalid_request(f"Unknown operations type {o.op}")
        current = self.configs(resource_type, name)
        new = _applied(resource_type, current, ops)
        if resource_type == BROKER:
            self._validate_broker(name, new)
            # KAFKA-14136: a broker record for every key named, even when unchanged
            records = [self._record(BROKER, name, o.name, new.get(o.name)) for o in ops]
            _check_elr_min_isr(name, records)
            return records
        self._validate(resource_type, name, new)
        return [self._record(resource_type, name, key, new.get(key))
                for key in sorted({o.name for o in ops}) if new.get(key) != current.get(key)]

    def legacy(self, resource_type: int, name: str, configs: Mapping[str, str | None],
               names: Sequence[str], node_id: int | None = None) -> list[Record]:
        """The records an AlterConfigs (every key replaced) of one resource writes."""
        self._preprocess(resource_type, name, names,
                         [key for key in names if configs.get(key) is None], node_id)
        new = {key: value for key, value in configs.items() if value is not None}
        if resource_type == BROKER:
            self._validate_broker(name, new)
        current = self.configs(resource_type, name)
        self._validate(resource_type, name, new)
        every = resource_type == BROKER  # KAFKA-14136: broker records even when unchanged
        out = [self._record(resource_type, name, key, value)
               for key, value in sorted(new.items()) if every or current.get(key) != value]
        out += [self._record(resource_type, name, key, None)
                for key in sorted(current) if key not in new]
        if resource_type == BROKER:
            _check_elr_min_isr(name, out)
        return out

    def elr_safety_records(self) -> list[Record]:
        """``ConfigurationControlManager.maybeGenerateElrSafetyRecords``, written when the
        controller activates (Kafka 4.1+ finalizes ``eligible.leader.replicas.version`` 1,
        and so does kcoord, always): a cluster-level ``min.insync.replicas`` of the static
        value when there is none, and no broker-level one. Nothing once they hold."""
        out = []
        if MIN_INSYNC_REPLICAS not in self.brokers.get("", {}):
            static = self.static_config.get(MIN_INSYNC_REPLICAS,
                                            SERVER_PROPERTIES[MIN_INSYNC_REPLICAS].default)
            out.append(self._record(BROKER, "", MIN_INSYNC_REPLICAS, static))
        out += [self._record(BROKER, name, MIN_INSYNC_REPLICAS, None)
                for name, configs in sorted(self.brokers.items())
                if name and MIN_INSYNC_REPLICAS in configs]
        return out

    def _preprocess(self, resource_type: int, name: str, names: Sequence[str],
                    nulls: Sequence[str], node_id: int | None) -> None:
        """``ConfigAdminManager.preprocess``: duplicates, nulls, the broker's name."""
        check_keys(names, nulls)
        if resource_type == BROKER:
            if name:
                try:
                    node = int(name)
                except ValueError:
                    raise _invalid_request(
                        f"Node id must be an integer, but it is: {name}") from None
                expected = self.node_id if node_id is None else node_id
                if node != expected:
                    raise _invalid_request(
                        f"Unexpected broker id, expected {expected}, but received {name}")
        elif resource_type not in (TOPIC, GROUP):
            raise _invalid_request(f"Unknown resource type {resource_type}")

    def _validate_broker(self, name: str, props: Mapping[str, str]) -> None:
        """``DynamicBrokerConfig.validateConfigs`` (its ConfigExceptions: INVALID_REQUEST,
        KAFKA-13609)."""
        fixed = {key for key in props
                 if key not in BROKER_KEYS and (key in self.static_config
                                                or key in SERVER_PROPERTIES
                                                or key in _NON_DYNAMIC_BROKER_KEYS)}
        if fixed:
            raise _invalid_request(f"Cannot update these configs dynamically: {_scala_set(fixed)}")
        for key, value in props.items():
            known = BROKER_KEYS.get(key)
            if known is not None:
                try:
                    known.parse(value)
                except InvalidConfig as exc:
                    raise _invalid_request(str(exc)) from None
        if not name:
            per_broker = PER_BROKER_KEYS & set(props)
            if per_broker:
                raise _invalid_request(
                    "Cannot update these configs at default cluster level, broker id must be "
                    f"specified: {_scala_set(per_broker)}")

    def _validate(self, resource_type: int, name: str, configs: Mapping[str, str]) -> None:
        """The controller's validation (``ControllerConfigurationValidator``), then the
        resource's existence."""
        if resource_type == TOPIC:
            illegal = self.topics.illegal_name(name)
            if illegal is not None:
                raise ConfigError(ErrorCode.INVALID_TOPIC_EXCEPTION, illegal)
            for key, value in configs.items():
                known = TOPIC_KEYS.get(key)
                if known is None:
                    raise _invalid_config(f"Unknown topic config name: {key}")
                try:
                    known.parse(value)
                except InvalidConfig as exc:
                    raise _invalid_config(str(exc)) from None
            if self.topics.topic_configs(name) is None:
                raise ConfigError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                  f"The topic '{name}' does not exist.")
        elif resource_type == GROUP:
            if not name:
                raise _invalid_request("Default group configs are not supported.")
            self._validate_group(configs)

    def _validate_group(self, configs: Mapping[str, str]) -> None:
        """``GroupConfig.validate``: names, values, then the broker's bounds."""
        values: dict[str, object] = {}
        for key in configs:
            if key not in GROUP_KEYS:
                raise _invalid_config(f"Unknown group config name: {key}")
        for key, known in GROUP_KEYS.items():
            raw = configs.get(key, known.default)
            assert raw is not None
            try:
                values[key] = known.parse(raw)
            except InvalidConfig as exc:
                raise _invalid_config(str(exc)) from None
        bounds = self.group_bounds
        session = values["consumer.session.timeout.ms"]
        heartbeat = values["consumer.heartbeat.interval.ms"]
        assert isinstance(session, int) and isinstance(heartbeat, int)
        checks = (
            (heartbeat < bounds.min_heartbeat_ms, "consumer.heartbeat.interval.ms must be "
             "greater than or equal to group.consumer.min.heartbeat.interval.ms"),
            (heartbeat > bounds.max_heartbeat_ms, "consumer.heartbeat.interval.ms must be "
             "less than or equal to group.consumer.max.heartbeat.interval.ms"),
            (session < bounds.min_session_ms, "consumer.session.timeout.ms must be greater "
             "than or equal to group.consumer.min.session.timeout.ms"),
            (session > bounds.max_session_ms, "consumer.session.timeout.ms must be less than "
             "or equal to group.consumer.max.session.timeout.ms"),
            (session <= heartbeat,
             "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"),
        )
        # The share.* bounds are checked here once share groups are served (a hook: their
        # keys already parse and validate above).
        for failed, message in checks:
            if failed:
                raise _invalid_config(message)

    def _record(self, resource_type: int, name: str, key: str, value: str | None) -> Record:
        topic_id = NO_TOPIC_ID
        if resource_type == TOPIC:
            found = self.topics.topic_configs(name)
            assert found is not None
            topic_id = found[0]  # type: ignore[assignment]
        return Record(ConfigRecordKey(resource_type, name, key),
                      ConfigRecordValue(value, topic_id))

    # ------------------------------------------------------------------ applying

    def apply(self, record: Record) -> None:
        """Change state from one ConfigRecord (live, once durable, and at replay)."""
        key, value = record.key, record.value
        assert isinstance(key, ConfigRecordKey)
        assert value is None or isinstance(value, ConfigRecordValue)
        new = None if value is None else value.value
        if key.resource_type == TOPIC:
            if value is not None:
                self.topics.set_topic_config(key.resource_name, value.topic_id, key.name, new)
        else:
            table = self.brokers if key.resource_type == BROKER else self.groups
            configs = table.setdefault(key.resource_name, {})
            if new is None:
                configs.pop(key.name, None)
            else:
                configs[key.name] = new
            if not configs:
                del table[key.resource_name]
        for listener in self.listeners:
            listener(key)


MIN_INSYNC_REPLICAS = "min.insync.replicas"


def _check_elr_min_isr(name: str, records: Sequence[Record]) -> None:
    """The controller's rule while ELR is on (always, here): no broker-level
    ``min.insync.replicas`` (set or deleted), and the cluster-level one never removed (nor
    left out of a legacy AlterConfigs, which removes what it does not name)."""
    for record in records:
        key, value = record.key, record.value
        assert isinstance(key, ConfigRecordKey) and isinstance(value, ConfigRecordValue)
        if key.name != MIN_INSYNC_REPLICAS:
            continue
        if name:
            raise _invalid_config(
                "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
        if value.value is None:
            raise _invalid_config(
                "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")


#: Broker keys Kafka never changes at runtime, beyond those this broker was started with and
#: the non-dynamic keys of SERVER_PROPERTIES (``DynamicConfig.Broker.nonDynamicProps``).
_NON_DYNAMIC_BROKER_KEYS = frozenset({
    "node.id", "broker.id", "log.dirs", "log.dir", "process.roles", "controller.listener.names",
    "controller.quorum.voters", "controller.quorum.bootstrap.servers", "num.partitions",
    "auto.create.topics.enable", "default.replication.factor", "offsets.topic.num.partitions",
    "transaction.state.log.num.partitions", "inter.broker.listener.name",
    "security.inter.broker.protocol", "delete.topic.enable", "broker.rack",
    "advertised.listeners",
})


def _applied(resource_type: int, current: Mapping[str, str],
             ops: Sequence[AlterOp]) -> dict[str, str]:
    """``current`` with ``ops`` applied in order (``prepareIncrementalConfigs`` for a broker,
    ``ConfigurationControlManager.incrementalAlterConfigResource`` otherwise, with their
    messages for an APPEND/SUBTRACT of a key that is not a list)."""
    new = dict(current)
    for o in ops:
        if o.op == SET:
            assert o.value is not None
            new[o.name] = o.value
        elif o.op == DELETE:
            new.pop(o.name, None)
        else:
            key = known_keys(resource_type).get(o.name)
            if resource_type == BROKER and key is None:
                raise _invalid_config(f"Unknown config name: {o.name}")
            if key is None or key.type is not ConfigType.LIST:
                if resource_type == BROKER:
                    verb = "append" if o.op == APPEND else "subtract"
                    raise _invalid_config(
                        f"Config value {verb} is not allowed for config key: {o.name}")
                verb = AlterConfigOpType(o.op).name
                raise _invalid_config(
                    f"Can't {verb} to key {o.name} because its type is not LIST.")
            assert o.value is not None
            parts = list_parts(new.get(o.name, key.default))
            items = o.value.split(",")
            if o.op == APPEND:
                parts += [item for item in items if item not in parts]
            else:
                parts = [part for part in parts if part not in items]
            new[o.name] = ",".join(parts)
    return new
