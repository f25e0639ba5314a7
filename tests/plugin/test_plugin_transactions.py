"""The pytest plugin shows transactions: ``kcoord.describe_transactions()`` while a real
confluent-kafka transactional producer works (its partitions, the offsets it staged with
``send_offsets_to_transaction``), and after the commit; ``restart()`` keeps them."""

from __future__ import annotations

import pytest

from coordinator.testing import KcoordServer

confluent_kafka = pytest.importorskip("confluent_kafka")


def test_describe_transactions_follows_a_transaction(kcoord: KcoordServer) -> None:
    kcoord.create_topic("tx-out", 2)
    kcoord.create_topic("tx-in", 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": kcoord.bootstrap,
                                         "transactional.id": "fixture-tx"})
    producer.init_transactions(15)
    (initialized,) = kcoord.describe_transactions()
    assert (initialized["transactional_id"], initialized["state"]) == ("fixture-tx", "Empty")

    producer.begin_transaction()
    producer.produce("tx-out", value=b"x", partition=1)
    assert producer.flush(10) == 0
    consumer = confluent_kafka.Consumer({"bootstrap.servers": kcoord.bootstrap,
                                         "group.id": "fixture-eos"})
    producer.send_offsets_to_transaction(
        [confluent_kafka.TopicPartition("tx-in", 0, 7)], consumer.consumer_group_metadata(), 15)
    consumer.close()
    (ongoing,) = kcoord.describe_transactions()
    assert ongoing["state"] == "Ongoing"
    assert ["tx-out", 1] in ongoing["partitions"]
    assert ongoing["staged_offsets"] == {"fixture-eos": [["tx-in", 0, 7]]}
    assert kcoord.committed("fixture-eos") == {}

    producer.commit_transaction(15)
    (done,) = kcoord.describe_transactions()
    assert (done["state"], done["partitions"], done["staged_offsets"]) == (
        "CompleteCommit", [], {})
    assert kcoord.committed("fixture-eos") == {("tx-in", 0): 7}

    kcoord.restart(kill=True)
    (restored,) = kcoord.describe_transactions()
    assert (restored["state"], restored["producer_id"], restored["producer_epoch"]) == (
        "CompleteCommit", done["producer_id"], done["producer_epoch"])
