"""The broker surface: the non-group APIs real clients need around a consumer group.

``BROKER_HANDLERS`` maps each API key to its handler (the contract of
``coordinator.server.context``); the handlers reach the topic data through
``ctx.state.topics``, a :class:`TopicStore`, and read their settings from
``ctx.state.config`` (see :data:`BROKER_CONFIG_DEFAULTS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordinator.broker import (
    api_versions,
    create_topics,
    delete_topics,
    fetch,
    find_coordinator,
    init_producer_id,
    list_offsets,
    metadata,
    produce,
)
from coordinator.broker.config import BROKER_CONFIG_DEFAULTS, validate_broker_config
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import FetchTarget, PartitionLog, Topic, TopicStore

if TYPE_CHECKING:
    from coordinator.server.context import Handler

__all__ = [
    "BROKER_CONFIG_DEFAULTS",
    "BROKER_HANDLERS",
    "BrokerError",
    "FetchTarget",
    "PartitionLog",
    "Topic",
    "TopicStore",
    "validate_broker_config",
]

BROKER_HANDLERS: dict[int, Handler] = {
    module.API_KEY: module.handle
    for module in (
        produce,
        fetch,
        list_offsets,
        metadata,
        find_coordinator,
        api_versions,
        create_topics,
        delete_topics,
        init_producer_id,
    )
}
