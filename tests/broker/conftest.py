"""Fixtures for the broker tests."""

from __future__ import annotations

import pytest
from broker_support import FakeState

from coordinator.broker.topics import TopicStore


@pytest.fixture
def store() -> TopicStore:
    return TopicStore()


@pytest.fixture
def state(store: TopicStore) -> FakeState:
    return FakeState(topics=store)
