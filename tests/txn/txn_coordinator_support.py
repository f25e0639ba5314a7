"""Constants and drivers shared by the TransactionCoordinatorTest mirrors
(test_transaction_coordinator.py and test_transaction_coordinator_epochs.py)."""

from __future__ import annotations

from typing import Any

import pytest
from txn_support import TXN_ID, Driver, InitProducerIdResponse, log_records

from wire.constants import ErrorCode as E

TIMEOUT = 1  # Kafka's txnTimeoutMs in TransactionCoordinatorTest
FAILED = InitProducerIdResponse(E.CONCURRENT_TRANSACTIONS)
#: Kafka's ``@ValueSource(shorts = Array(0, 2))``: the client's transaction version.
TV = pytest.mark.parametrize("tv", [0, 2])


def txn_records(d: Driver) -> list[Any]:
    """The transaction log record values of the last result."""
    return [r.value for r in log_records(d.last)]


def not_owning() -> Driver:
    """A coordinator that owns no transaction log partition."""
    return Driver(owned_partitions=())


def loading() -> Driver:
    """A coordinator still loading the partition of ``TXN_ID``."""
    d = Driver(owned_partitions=())
    d.coordinator.load_partition(d.coordinator.partition_for(TXN_ID), 0)
    return d
