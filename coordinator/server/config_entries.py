"""DescribeConfigs' entries: each key with its value, source and synonyms, as Kafka's
``ConfigHelper`` and ``DynamicBrokerConfig`` layer them.

A broker key's layers, in order of precedence: this broker's dynamic value
(DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG), the
value the broker was started with (STATIC_BROKER_CONFIG), then Kafka's default
(DEFAULT_CONFIG, none for a null default). Its synonyms (``configSynonyms``) are the layers of
every key of its setting (``log.retention.ms``, ``log.retention.minutes``,
``log.retention.hours``), source by source, from the described key's first own layer on; the
entry's source is the first synonym's (DEFAULT_CONFIG when there is none). A topic key: the
topic's own value (TOPIC_CONFIG), then the synonyms of its broker key (``retention.ms``:
``log.retention.ms``); its value is the topic's, else the broker setting's as Kafka's getters
read it (ms, else minutes, else hours, in ms), else the topic default. A group key: the
group's value (GROUP_CONFIG), then the synonyms of the broker key it follows
(``consumer.session.timeout.ms``: ``group.consumer.session.timeout.ms``), or its own default
when there is no such broker key (``share.auto.offset.reset``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from coordinator.configs.definitions import (
    BROKER_KEYS,
    GROUP_BROKER_DEFAULTS,
    GROUP_KEYS,
    SERVER_PROPERTIES,
    SYNONYM_SCALE,
    TOPIC_KEYS,
    TOPIC_SYNONYMS,
    ConfigKey,
    broker_key,
)
from coordinator.configs.security_keys import listener_base_key
from wire.constants import ConfigSource, ConfigType

if TYPE_CHECKING:
    from coordinator.configs.store import DynamicConfigs
    from coordinator.server.context import RequestContext

__all__ = ["ConfigView", "Layer", "entry"]

Layer = tuple[str, str | None, int]
"""(name, value, source): one synonym."""

#: ``DynamicBrokerConfig.brokerConfigSynonyms``: keys that are one setting in several units.
_BROKER_SYNONYMS = {
    name: group for group in (
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
        ("log.roll.ms", "log.roll.hours"),
        ("log.roll.jitter.ms", "log.roll.jitter.hours"),
        ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ) for name in group
}


def _setting(name: str) -> tuple[str, ...]:
    """``DynamicBrokerConfig.brokerConfigSynonyms(name, matchListenerOverride = true)``: the
    keys of ``name``'s setting, a listener override followed by the key it overrides."""
    group = _BROKER_SYNONYMS.get(name)
    if group is not None:
        return group
    base = listener_base_key(name)
    return (name,) if base is None else (name, base)


def entry(name: str, layers: list[Layer], known: ConfigKey | None, read_only: bool,
          synonyms: bool, documentation: bool, value: str | None = None) -> dict[str, Any]:
    """One DescribeConfigs entry from its layers (none: no value, DEFAULT_CONFIG).

    Its type is its key's (UNKNOWN for a key kcoord does not define), its documentation
    the key's when asked for. A PASSWORD key, or one whose type is unknown, is sensitive:
    no value, in the entry or its synonyms (``KafkaConfig.maybeSensitive``)."""
    source = layers[0][2] if layers else ConfigSource.DEFAULT_CONFIG
    if value is None and layers:
        value = layers[0][1]
    sensitive = known is None or known.type is ConfigType.PASSWORD
    return {
        "name": name,
        "value": None if sensitive else value,
        "read_only": read_only,
        "is_default": source == ConfigSource.DEFAULT_CONFIG,
        "config_source": source,
        "is_sensitive": sensitive,
        "synonyms": ([{"name": n, "value": None if sensitive else v, "source": s}
                      for n, v, s in layers] if synonyms else []),
        "config_type": ConfigType.UNKNOWN if known is None else known.type,
        "documentation": known.documentation if documentation and known is not None else None,
    }


class ConfigView:
    """What DescribeConfigs reads: the static config, the keys given explicitly, and the
    dynamic configs once the config shard is attached."""

    def __init__(self, ctx: RequestContext) -> None:
        runtime = ctx.state.groups
        shard = getattr(runtime, "configs", None) if runtime is not None else None
        self.store: DynamicConfigs | None = None if shard is None else shard.store
        self.static: Mapping[str, str] = (ctx.state.config if self.store is None
                                          else self.store.static_config)
        self.explicit: frozenset[str] = getattr(ctx.state, "explicit_config_keys", frozenset())
        self.node = str(ctx.state.identity.node_id)

    def dynamic(self, name: str) -> Mapping[str, str]:
        """A broker resource's dynamic configs ("": the cluster-wide default)."""
        return {} if self.store is None else self.store.brokers.get(name, {})

    def _default_layer(self, key: str) -> Layer | None:
        if key in self.static and key not in self.explicit:
            return (key, self.static[key], ConfigSource.DEFAULT_CONFIG)
        # Kafka's static defaults: every key's, dynamic or not (a listener override has none)
        known = SERVER_PROPERTIES.get(key)
        if known is not None and known.default is not None:
            return (key, known.default, ConfigSource.DEFAULT_CONFIG)
        return None  # (a null default is not among Kafka's staticDefaultConfigs)

    def _source_layers(self, names: tuple[str, ...]) -> list[Layer]:
        """Every layer of ``names``, source by source (dynamic broker, dynamic default,
        static, default), each source's names in order: ``ConfigHelper.configSynonyms``
        before its drop."""
        node, default = self.dynamic(self.node), self.dynamic("")
        layers: list[Layer] = [(n, node[n], ConfigSource.DYNAMIC_BROKER_CONFIG)
                               for n in names if n in node]
        layers += [(n, default[n], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
                   for n in names if n in default]
        # (an explicit key not in the static config is a secret, shown as null)
        layers += [(n, self.static.get(n), ConfigSource.STATIC_BROKER_CONFIG)
                   for n in names if n in self.explicit]
        layers += [d for n in names if (d := self._default_layer(n)) is not None]
        return layers

    def synonym_layers(self, name: str) -> list[Layer]:
        """The synonyms Kafka reports for the broker key ``name``: the layers of every key of
        its setting (``DynamicBrokerConfig.brokerConfigSynonyms``: ``log.retention.ms``,
        ``.minutes``, ``.hours``), source by source, from the first of ``name``'s own on
        (``configSynonyms``' dropWhile: none when ``name`` has no layer of its own, so a
        topic's ``retention.ms`` has no synonyms when only ``log.retention.hours`` is set)."""
        layers = self._source_layers(_setting(name))
        first = next((i for i, layer in enumerate(layers) if layer[0] == name), len(layers))
        return layers[first:]

    def effective(self, name: str) -> str | None:
        """The broker setting's value as Kafka's getters read it: ``name``'s own layers
        first, then its lesser-unit synonyms' (``logRetentionTimeMillis``: ms, else minutes,
        else hours), converted to ``name``'s unit (a negative value is -1)."""
        names = _setting(name)
        for candidate in names[names.index(name):]:
            layers = self._source_layers((candidate,))
            if layers and layers[0][1] is not None:
                value = layers[0][1]
                if candidate == name or candidate not in SYNONYM_SCALE:
                    return value
                number = int(value)
                return str(-1 if number < 0 else number * SYNONYM_SCALE[candidate])
        return None

    def broker_entries(self, keys: set[str], synonyms: bool, docs: bool) -> list[dict[str, Any]]:
        """This broker's entries for ``keys`` (``createBrokerConfigEntry``): each key's own
        value, its synonyms' first source."""
        out = []
        for key in sorted(keys):
            layers = self.synonym_layers(key)
            value = layers[0][1] if layers else None
            out.append(entry(key, layers, broker_key(key), key not in BROKER_KEYS, synonyms,
                             docs, value))
        return out

    def default_entries(self, synonyms: bool, docs: bool) -> list[dict[str, Any]]:
        """The cluster-wide default resource's entries: each key set there, its synonyms
        those set there too (``perBrokerConfig = false``)."""
        out = []
        for key, value in sorted(self.dynamic("").items()):
            layers = [layer for layer in self.synonym_layers(key)
                      if layer[2] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
            out.append(entry(key, layers, broker_key(key), key not in BROKER_KEYS, synonyms,
                             docs, value))
        return out

    def topic_entries(self, overrides: Mapping[str, str], synonyms: bool,
                      docs: bool) -> list[dict[str, Any]]:
        """A topic's entries (``createTopicConfigEntry``): every topic key Kafka defines, and
        any it was given. The topic's own value (TOPIC_CONFIG) is the first synonym, then its
        broker key's (``ServerTopicConfigSynonyms``); the value is the topic's, else the broker
        setting's, else the topic key's default."""
        out = []
        for key in sorted(set(TOPIC_KEYS) | set(overrides)):
            layers: list[Layer] = []
            value: str | None = None
            if key in overrides:
                value = overrides[key]
                layers.append((key, value, ConfigSource.TOPIC_CONFIG))
            broker_names = TOPIC_SYNONYMS.get(key, ())
            if broker_names:
                layers += self.synonym_layers(broker_names[0])
                if value is None:
                    value = self.effective(broker_names[0])
            known = TOPIC_KEYS.get(key)
            if value is None and known is not None:
                value = known.default
            out.append(entry(key, layers, known, False, synonyms, docs, value))
        return out

    def group_entries(self, group_id: str, synonyms: bool, docs: bool) -> list[dict[str, Any]]:
        """A group's entries (``ConfigHelper.createGroupConfigEntry``): every group key, the
        group's own value (GROUP_CONFIG) first, then the layers of the broker key it follows
        (``group.<key>``), or, with no broker key, the group key's default."""
        overrides = {} if self.store is None else self.store.groups.get(group_id, {})
        out = []
        for key, known in sorted(GROUP_KEYS.items()):
            layers: list[Layer] = []
            if key in overrides:
                layers.append((key, overrides[key], ConfigSource.GROUP_CONFIG))
            followed = GROUP_BROKER_DEFAULTS.get(key)
            if followed is not None:
                layers += self.synonym_layers(followed)
            elif known.default is not None:
                layers.append((key, known.default, ConfigSource.DEFAULT_CONFIG))
            value = overrides.get(key)
            if value is None:
                value = known.default if followed is None else self.effective(followed)
            out.append(entry(key, layers, known, False, synonyms, docs, value))
        return out
