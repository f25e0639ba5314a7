"""DescribeConfigs' entries: each key with its value, source and synonyms, as Kafka's
``ConfigHelper`` and ``DynamicBrokerConfig`` layer them.

A broker key's layers, in order of precedence: this broker's dynamic value
(DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG), the
value the broker was started with (STATIC_BROKER_CONFIG), then Kafka's default
(DEFAULT_CONFIG). A topic key: the topic's own value (DYNAMIC_TOPIC_CONFIG), then the layers of
its broker synonyms (``retention.ms``: ``log.retention.ms``, ``log.retention.minutes``,
``log.retention.hours``, each in that order, converted to the topic key's unit), then the
topic default. A group key: the group's value (GROUP_CONFIG), then the layers of the broker key
it follows (``consumer.session.timeout.ms``: ``group.consumer.session.timeout.ms``), or its own
default when there is no such broker key (``share.auto.offset.reset``).
The first layer is the entry's value and source; all of them are its synonyms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from coordinator.configs.definitions import (
    BROKER_KEYS,
    GROUP_BROKER_DEFAULTS,
    GROUP_KEYS,
    SYNONYM_SCALE,
    TOPIC_KEYS,
    TOPIC_SYNONYMS,
    ConfigKey,
    broker_key,
)
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

    def _set_layers(self, key: str) -> list[Layer]:
        layers: list[Layer] = []
        node, default = self.dynamic(self.node), self.dynamic("")
        if key in node:
            layers.append((key, node[key], ConfigSource.DYNAMIC_BROKER_CONFIG))
        if key in default:
            layers.append((key, default[key], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
        if key in self.explicit:  # (not in the static config: a secret, shown as null)
            layers.append((key, self.static.get(key), ConfigSource.STATIC_BROKER_CONFIG))
        return layers

    def _default_layer(self, key: str) -> Layer | None:
        if key in self.static and key not in self.explicit:
            return (key, self.static[key], ConfigSource.DEFAULT_CONFIG)
        known = broker_key(key)  # Kafka's static defaults: every key's, dynamic or not
        if known is not None and known.default is not None:
            return (key, known.default, ConfigSource.DEFAULT_CONFIG)
        return None

    def broker_layers(self, names: tuple[str, ...]) -> list[Layer]:
        """The layers of a setting known by ``names`` (in precedence order)."""
        layers = [layer for name in names for layer in self._set_layers(name)]
        default = next((d for name in names if (d := self._default_layer(name)) is not None),
                       None)
        return layers if default is None else [*layers, default]

    def broker_entries(self, keys: set[str], synonyms: bool, docs: bool) -> list[dict[str, Any]]:
        """This broker's entries for ``keys``."""
        out = []
        for key in sorted(keys):
            names = _BROKER_SYNONYMS.get(key, (key,))
            layers = self.broker_layers(names[names.index(key):])
            own = [layer for layer in layers if layer[0] == key]
            value = own[0][1] if own else None
            source = own[0][2] if own else ConfigSource.DEFAULT_CONFIG
            made = entry(key, layers, broker_key(key), key not in BROKER_KEYS, synonyms, docs,
                         value)
            made["config_source"] = source
            made["is_default"] = source == ConfigSource.DEFAULT_CONFIG
            out.append(made)
        return out

    def topic_entries(self, overrides: Mapping[str, str], synonyms: bool,
                      docs: bool) -> list[dict[str, Any]]:
        """A topic's entries: every topic key Kafka defines, and any it was given."""
        out = []
        for key in sorted(set(TOPIC_KEYS) | set(overrides)):
            layers: list[Layer] = []
            if key in overrides:
                layers.append((key, overrides[key], ConfigSource.TOPIC_CONFIG))
            layers += self.broker_layers(TOPIC_SYNONYMS.get(key, ()))
            known = TOPIC_KEYS.get(key)
            if len(layers) == 0 and known is not None:
                layers.append((key, known.default, ConfigSource.DEFAULT_CONFIG))
            value = None
            if layers and layers[0][0] in SYNONYM_SCALE and layers[0][1] is not None:
                number = int(layers[0][1])
                value = str(-1 if number < 0 else number * SYNONYM_SCALE[layers[0][0]])
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
                layers += self.broker_layers((followed,))
            elif known.default is not None:
                layers.append((key, known.default, ConfigSource.DEFAULT_CONFIG))
            out.append(entry(key, layers, known, False, synonyms, docs))
        return out
