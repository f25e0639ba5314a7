"""Kafka's own documentation of a config key, looked up by name when DescribeConfigs asks for
documentation (``kafka_doc``): the text lives in ``topic_docs``, ``group_docs`` and
``broker_docs``, imported only then, so a starting server does not load it."""

from __future__ import annotations

from coordinator.configs.broker_docs import BROKER_DOCS
from coordinator.configs.group_docs import GROUP_COORDINATOR_DOCS, SHARE_AUTO_OFFSET_RESET_DOC
from coordinator.configs.topic_docs import TOPIC_DOCS

__all__ = ["TOPIC", "kafka_doc"]

#: ``GroupConfig``'s own text (its other keys are documented as the broker keys they follow).
_GROUP_ONLY = {"share.auto.offset.reset": SHARE_AUTO_OFFSET_RESET_DOC}


#: A topic key's reference: its documentation differs from a broker key of the same name's
#: (``min.insync.replicas``, ``unclean.leader.election.enable``).
TOPIC = "topic:"


def kafka_doc(name: str) -> str:
    """Kafka's documentation of the broker or group key ``name``, or of the topic key after
    ``TOPIC`` (KeyError: none)."""
    if name.startswith(TOPIC):
        return TOPIC_DOCS[name[len(TOPIC):]]
    for docs in (GROUP_COORDINATOR_DOCS, BROKER_DOCS, _GROUP_ONLY):
        text = docs.get(name)
        if text is not None:
            return text
    raise KeyError(name)
