"""The broker surface: the non-group APIs real clients need around a consumer group.

One module per API, each with a ``handle`` (the contract of ``coordinator.server.context``)
that the server's handler table (``coordinator/server/apis.py``) names; the handlers reach
the topic data through ``ctx.state.topics``, a :class:`TopicStore`, and read their settings
from ``ctx.state.config`` (see :data:`BROKER_CONFIG_DEFAULTS`).
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
