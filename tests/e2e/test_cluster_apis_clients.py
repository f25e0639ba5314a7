"""The cluster APIs of issue 30 through kafka-python's admin client over TCP:
DescribeTopicPartitions paged with its cursor, DescribeLogDirs' sizes, DescribeProducers'
open transaction, AlterReplicaLogDirs, DescribeQuorum, Alter/ListPartitionReassignments on
three brokers; and ElectLeaders through confluent-kafka's admin client on three brokers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coordinator.testing import KcoordServer

# Real clients for tens of seconds: slow, run by CI after the default run (which stays
# under ten minutes on two cores).
pytestmark = pytest.mark.slow

kafka_admin = pytest.importorskip("kafka.admin")
KafkaProducer = pytest.importorskip("kafka").KafkaProducer
TopicPartition = pytest.importorskip("kafka").TopicPartition
TopicPartitionReplica = pytest.importorskip("kafka").TopicPartitionReplica
kafka_errors = pytest.importorskip("kafka.errors")


def admin_for(bootstrap: str) -> Any:
    return kafka_admin.KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)


def test_kafka_python_describe_topic_partitions_pages(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = admin_for(server.bootstrap)
    try:
        admin.create_topics([kafka_admin.NewTopic("pages", 5, 1)])
        first = admin.describe_topic_partitions(["pages", "nope"], response_partition_limit=3)
        rest = admin.describe_topic_partitions(["pages", "nope"], response_partition_limit=3,
                                               cursor=first["next_cursor"])
    finally:
        admin.close()
    assert first["next_cursor"] == {"topic_name": "pages", "partition_index": 3}
    def summary(answer: Any) -> list[tuple[str, int, list[int]]]:
        return [(t["name"], t["error_code"], [p["partition_index"] for p in t["partitions"]])
                for t in answer["topics"]]

    # In name order; the second page starts at the cursor's topic, so "nope" is not repeated.
    assert summary(first) == [("nope", 3, []), ("pages", 0, [0, 1, 2])]
    assert all(p["leader_id"] == 0 and p["isr_nodes"] == [0]
               for p in first["topics"][1]["partitions"])
    assert summary(rest) == [("pages", 0, [3, 4])]
    assert rest["next_cursor"] is None


def test_kafka_python_describe_log_dirs_reports_real_sizes(start_kcoord: Any,
                                                           tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_kcoord(data_dir=data)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap, acks="all")
    admin = admin_for(server.bootstrap)
    try:
        admin.create_topics([kafka_admin.NewTopic("sized", 2, 1)])
        for _ in range(20):
            producer.send("sized", b"v" * 100, partition=0)
        producer.flush(10)
        described = admin.describe_log_dirs()
    finally:
        producer.close()
        admin.close()
    [(broker, [log_dir])] = [(d["broker"], d["log_dirs"]) for d in described]
    assert broker == 0 and log_dir["error_code"] == 0
    assert log_dir["log_dir"] == str(data.resolve())
    [topic] = [t for t in log_dir["topics"] if t["name"] == "sized"]
    by_partition = {p["partition_index"]: p for p in topic["partitions"]}
    assert by_partition[0]["partition_size"] > 20 * 100
    assert by_partition[1]["partition_size"] < by_partition[0]["partition_size"]
    assert {p["offset_lag"] for p in by_partition.values()} == {0}


def test_kafka_python_describe_producers_sees_an_open_transaction(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = admin_for(server.bootstrap)
    producer = KafkaProducer(bootstrap_servers=server.bootstrap, transactional_id="tx-described")
    try:
        admin.create_topics([kafka_admin.NewTopic("produced", 1, 1)])
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("produced", b"one", partition=0)
        producer.send("produced", b"two", partition=0)
        producer.flush(10)
        partition = TopicPartition("produced", 0)
        open_txn = admin.describe_producers([partition])[partition].active_producers
        producer.abort_transaction()
        aborted = admin.describe_producers([partition])[partition].active_producers
    finally:
        producer.close()
        admin.close()
    [state] = open_txn
    assert state.producer_id >= 0 and state.last_sequence == 1
    assert state.current_transaction_start_offset == 0
    [after] = aborted
    assert after.producer_id == state.producer_id
    assert after.current_transaction_start_offset == -1


def test_confluent_elect_preferred_leaders_on_three_brokers() -> None:
    confluent_admin = pytest.importorskip("confluent_kafka.admin")
    confluent_kafka = pytest.importorskip("confluent_kafka")
    with KcoordServer({"default.replication.factor": "2"}, brokers=3,
                      topics={"elected": 3}) as kcoord:
        kcoord.stop_broker(0)
        kcoord.start_broker(0)  # elected-0 stays on broker 1 until an election
        admin = confluent_admin.AdminClient({"bootstrap.servers": kcoord.bootstraps[2]})
        first = confluent_kafka.TopicPartition("elected", 0)
        second = confluent_kafka.TopicPartition("elected", 1)
        before = admin.list_topics("elected", timeout=10).topics["elected"].partitions
        assert before[0].leader == 1
        results = admin.elect_leaders(confluent_kafka.ElectionType.PREFERRED,
                                      [first, second]).result(15)
        after = admin.list_topics("elected", timeout=10).topics["elected"].partitions
    outcome = {tp.partition: error for tp, error in results.items()}
    assert outcome[0] is None
    assert outcome[1].code() == confluent_kafka.KafkaError.ELECTION_NOT_NEEDED
    assert after[0].leader == 0


def test_kafka_python_describe_metadata_quorum(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = admin_for(server.bootstrap)
    try:
        quorum = admin.describe_metadata_quorum()
    finally:
        admin.close()
    [topic] = quorum["topics"]
    [partition] = topic["partitions"]
    assert topic["topic_name"] == "__cluster_metadata" and partition["error"] is None
    assert (partition["leader_id"], partition["leader_epoch"]) == (0, 1)
    assert [v["replica_id"] for v in partition["current_voters"]] == [0]
    assert partition["observers"] == []
    [node] = quorum["nodes"]
    host, port = server.bootstrap.rsplit(":", 1)
    assert [(lst["host"], lst["port"]) for lst in node["listeners"]] == [(host, int(port))]


def test_kafka_python_alter_and_list_partition_reassignments() -> None:
    with KcoordServer({"default.replication.factor": "2"}, brokers=3,
                      topics={"moved": 2}) as kcoord:
        admin = admin_for(kcoord.bootstraps[1])
        try:
            moved = TopicPartition("moved", 0)
            results = admin.alter_partition_reassignments({
                moved: [2, 1], TopicPartition("moved", 1): None})
            ongoing = admin.list_partition_reassignments()
            described = admin.describe_topic_partitions(["moved"])
        finally:
            admin.close()
    assert results[moved] is None
    assert results[TopicPartition("moved", 1)] is kafka_errors.NoReassignmentInProgressError
    assert ongoing == {}
    first = described["topics"][0]["partitions"][0]
    assert (first["leader_id"], first["replica_nodes"], first["leader_epoch"]) == (2, [2, 1], 1)


def test_kafka_python_alter_replica_log_dirs_to_the_current_dir(start_kcoord: Any) -> None:
    server = start_kcoord()
    admin = admin_for(server.bootstrap)
    try:
        admin.create_topics([kafka_admin.NewTopic("dirs", 1, 1)])
        [described] = admin.describe_log_dirs()
        current = described["log_dirs"][0]["log_dir"]
        replica = TopicPartitionReplica("dirs", 0, 0)
        here = admin.alter_replica_log_dirs({replica: current})
        elsewhere = admin.alter_replica_log_dirs({replica: "/no/such/dir"})
    finally:
        admin.close()
    assert here == {replica: kafka_errors.NoError}
    assert elsewhere == {replica: kafka_errors.LogDirNotFoundError}
