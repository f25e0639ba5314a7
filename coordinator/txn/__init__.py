"""Kafka transactions as pure, sans-I/O code: the transaction coordinator (state machine,
log records, loading, timeouts), placement of ids on internal-topic partitions, and a
partition's producer state (idempotence, ongoing transactions, last stable offset,
aborted-transaction index).

The coordinator (``coordinator.txn.coordinator``, its API handlers in
``coordinator.txn.handlers``) is a shard of the coordinator runtime, speaking the group
core's Result vocabulary (``coordinator.core.result``); no I/O, no clock. The package
root imports nothing: a broker that only needs where ``__transaction_state`` partitions lie
(``coordinator.txn.placement``) to answer its first Metadata does not load the coordinator,
its log records and its configuration (issue 33: start-up to the first answer).
"""
