"""The broker's topic store: topics, their partition logs and record batches, topic files
and the broker's config (:data:`BROKER_CONFIG_DEFAULTS`).

The APIs that read and write it are the server's route modules
(``coordinator/server/apis/``); they reach the store through ``ctx.state.topics``, a
:class:`TopicStore`. Nothing here imports ``coordinator.server``.
"""

from __future__ import annotations

from coordinator.broker.config import BROKER_CONFIG_DEFAULTS, validate_broker_config
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import FetchTarget, PartitionLog, Topic, TopicStore

__all__ = [
    "BROKER_CONFIG_DEFAULTS",
    "BrokerError",
    "FetchTarget",
    "PartitionLog",
    "Topic",
    "TopicStore",
    "validate_broker_config",
]
