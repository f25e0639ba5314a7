"""A topic directory for the config store's tests, and request builders."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from coordinator.configs.store import ConfigError, DynamicConfigs


class FakeTopics:
    """Topics by name: (id, configs)."""

    def __init__(self, **topics: dict[str, str]) -> None:
        self.topics = {name: (uuid.uuid4(), dict(configs)) for name, configs in topics.items()}

    def topic_configs(self, name: str) -> tuple[object, Mapping[str, str]] | None:
        return self.topics.get(name)

    def illegal_name(self, name: str) -> str | None:
        return None if name and "!" not in name else f"illegal topic name {name!r}"

    def set_topic_config(self, name: str, topic_id: object, key: str, value: str | None) -> None:
        found = self.topics.get(name)
        if found is None or found[0] != topic_id:
            return
        if value is None:
            found[1].pop(key, None)
        else:
            found[1][key] = value


def store(node_id: int = 0, static: Mapping[str, str] | None = None,
          **topics: dict[str, str]) -> DynamicConfigs:
    return DynamicConfigs(node_id, FakeTopics(**topics),
                          static_config=static or {"message.max.bytes": "1048588",
                                                   "auto.create.topics.enable": "true"})


def apply_all(configs: DynamicConfigs, records: list[Any]) -> None:
    for record in records:
        configs.apply(record)


def request(api_key: int, *resources: tuple[int, str, list[tuple[Any, ...]]],
            validate_only: bool = False) -> Any:
    """A decoded AlterConfigs (33: configs are (name, value)) or IncrementalAlterConfigs
    (44: (name, op, value)) request."""
    def config(entry: tuple[Any, ...]) -> Any:
        if api_key == 33:
            return SimpleNamespace(name=entry[0], value=entry[1])
        return SimpleNamespace(name=entry[0], config_operation=entry[1], value=entry[2])

    return SimpleNamespace(api_key=api_key, body=SimpleNamespace(
        validate_only=validate_only,
        resources=[SimpleNamespace(resource_type=t, resource_name=n,
                                   configs=[config(c) for c in cs]) for t, n, cs in resources]))


def error_of(call: Any) -> tuple[int, str]:
    """The (code, message) of the ConfigError ``call()`` raises."""
    try:
        call()
    except ConfigError as exc:
        return exc.code, exc.message
    raise AssertionError("no error")
