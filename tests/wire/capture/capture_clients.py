"""The clients the capture broker drives (used by capture_broker.py): the kafka-python,
aiokafka and confluent-kafka scripts and the kcat command lines, each run in its own
subprocess with a hard timeout.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass

from capture_server import TOPIC, State

KAFKA_PYTHON_CONSUMER = """
import sys, time
from kafka import KafkaConsumer
c = KafkaConsumer(bootstrap_servers=sys.argv[1], group_id="g-kafka-python",
                  client_id="kafka-python-golden", auto_offset_reset="earliest",
                  enable_auto_commit=False, heartbeat_interval_ms=1000)
c.subscribe(["t1"])
got, deadline = 0, time.time() + 15
while time.time() < deadline and got < 3:
    got += sum(len(v) for v in c.poll(timeout_ms=500).values())
end = time.time() + 2.5  # let a heartbeat or two go out
while time.time() < end:
    c.poll(timeout_ms=200)
c.commit()
c.close()
print("consumed", got)
"""

KAFKA_PYTHON_ADMIN = """
import sys
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
p = KafkaProducer(bootstrap_servers=sys.argv[1], client_id="kafka-python-golden",
                  enable_idempotence=True, acks="all")
p.send("t1", b"hello").get(timeout=10)
p.close(timeout=5)
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="kafka-python-golden")
a.create_topics([NewTopic("t2", 1, 1)])
print(a.list_groups())
print(a.describe_groups(["g-kafka-python"]))
print(a.delete_groups(["g-kafka-python"]))
a.close()
"""

AIOKAFKA_CONSUMER = """
import asyncio, sys, time
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

async def main():
    c = AIOKafkaConsumer("t1", bootstrap_servers=sys.argv[1], group_id="g-aiokafka",
                         client_id="aiokafka-golden", auto_offset_reset="earliest",
                         enable_auto_commit=False, heartbeat_interval_ms=1000)
    await c.start()
    got, deadline = 0, time.time() + 15
    while time.time() < deadline and got < 3:
        got += sum(len(v) for v in (await c.getmany(timeout_ms=500)).values())
    await asyncio.sleep(2.5)
    await c.commit()
    await c.stop()
    print("consumed", got)
    p = AIOKafkaProducer(bootstrap_servers=sys.argv[1], client_id="aiokafka-golden",
                         enable_idempotence=True)
    await p.start()
    await p.send_and_wait("t1", b"hello")
    await p.stop()
    a = AIOKafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="aiokafka-golden")
    await a.start()
    await a.create_topics([NewTopic("t2", 1, 1)])
    print(await a.list_consumer_groups())
    print(await a.describe_consumer_groups(["g-aiokafka"]))
    await a.close()

asyncio.run(main())
"""

CONFLUENT_CONSUMER = """
import sys, time
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
conf = {"bootstrap.servers": sys.argv[1], "client.id": "confluent-golden"}
c = Consumer({**conf, "group.id": "g-confluent", "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "heartbeat.interval.ms": 1000,
              "session.timeout.ms": 10000})
c.subscribe(["t1"])
got, deadline = 0, time.time() + 15
while time.time() < deadline and got < 3:
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        got += 1
end = time.time() + 2.5
while time.time() < end:
    c.poll(0.2)
c.commit(asynchronous=False)
c.close()
print("consumed", got)
p = Producer({**conf, "enable.idempotence": True})
p.produce("t1", b"hello")
p.flush(10)
a = AdminClient(conf)
for f in a.create_topics([NewTopic("t2", 1, 1)]).values():
    f.result(10)
print(a.list_consumer_groups().result(10))
for f in a.describe_consumer_groups(["g-confluent"]).values():
    print(f.result(10))
for f in a.delete_consumer_groups(["g-confluent"]).values():
    print(f.result(10))
"""


@dataclass(frozen=True)
class ClientRun:
    client: str
    argv: list[str]
    timeout: float
    stdin: str | None = None


def client_runs(bootstrap: str, names: list[str]) -> Iterator[ClientRun]:
    py = sys.executable
    table = {
        "kafka-python": [
            ClientRun("kafka-python", [py, "-c", KAFKA_PYTHON_CONSUMER, bootstrap], 40),
            ClientRun("kafka-python", [py, "-c", KAFKA_PYTHON_ADMIN, bootstrap], 40),
        ],
        "aiokafka": [ClientRun("aiokafka", [py, "-c", AIOKAFKA_CONSUMER, bootstrap], 50)],
        "confluent-kafka": [
            ClientRun("confluent-kafka", [py, "-c", CONFLUENT_CONSUMER, bootstrap], 50)
        ],
        "kcat": [ClientRun("kcat", [
            "kcat", "-b", bootstrap, "-G", "g-kcat", "-c", "3", "-q",
            "-X", "client.id=kcat-golden", "-X", "auto.offset.reset=earliest",
            "-X", "heartbeat.interval.ms=1000", "-X", "session.timeout.ms=10000", TOPIC,
        ], 30), ClientRun("kcat", [
            "kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-X", "client.id=kcat-golden",
            "-X", "enable.idempotence=true",
        ], 30, stdin="hello\n")],
    }
    for name in names:
        yield from table[name]


def run_client(state: State, run: ClientRun) -> None:
    state.client = run.client
    print(f"--- {run.client}: {' '.join(a if len(a) < 60 else '<script>' for a in run.argv)}")
    proc = subprocess.Popen(run.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(run.stdin or "", timeout=run.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        print(f"    (killed after {run.timeout}s)")
    print(textwrap.indent(out.strip()[-3000:], "    "))
    time.sleep(0.5)  # late frames (LeaveGroup on close) still belong to this client
