// kafkajs 2.2.4 against a kcoord server: produce COUNT messages to TOPIC, then two
// consumers in GROUP consume them all, committing each message's offset (kafkajs's
// commitOffsets with autoCommit off), and print what they saw as one JSON line.
// Usage: node group_run.js BOOTSTRAP TOPIC GROUP COUNT
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, topic, groupId, countText] = process.argv.slice(2);
const count = Number(countText);
const kafka = new Kafka({
  clientId: "kafkajs-e2e",
  brokers: [bootstrap],
  logLevel: logLevel.ERROR,
  retry: { retries: 10, initialRetryTime: 100 },
});

async function main() {
  const consumers = [0, 1].map(() =>
    // kafkajs heartbeats between fetches, so a fetch waits far less than a session lasts.
    kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 200 })
  );
  // Each consumer's partitions from its latest GROUP_JOIN.
  const owned = [[], []];
  const values = new Set();
  const seen = [];
  let wake = () => {};
  const until = (condition) => new Promise((resolve) => {
    const check = () => { if (condition()) resolve(); else wake = check; };
    check();
  });
  for (const [index, consumer] of consumers.entries()) {
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      owned[index] = payload.memberAssignment[topic] || [];
      if (process.env.KAFKAJS_TRACE) process.stderr.write(`${Date.now()} join ${index} ${payload.memberId} ${JSON.stringify(owned[index])}\n`);
      wake();
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        seen.push({ consumer: index, partition, offset: Number(message.offset), value: message.value.toString() });
        values.add(message.value.toString());
        await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
        wake();
      },
    });
  }
  // Both members hold a share of the partitions, together all of them, before anything is
  // produced; that split is reported.
  const split = () => {
    const all = [...owned[0], ...owned[1]];
    return owned[0].length > 0 && owned[1].length > 0 && new Set(all).size === all.length;
  };
  await until(split);
  const ownedAtProduce = owned.map((partitions) => [...partitions]);

  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ key: String(i), value: `js-${i}` });
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
  await until(() => values.size >= count);

  const admin = kafka.admin();
  await admin.connect();
  const described = await admin.describeGroups([groupId]);
  const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
  await admin.disconnect();
  for (const consumer of consumers) await consumer.disconnect();
  const group = described.groups[0];
  process.stdout.write(JSON.stringify({
    seen,
    owned: ownedAtProduce,
    group: { state: group.state, protocolType: group.protocolType, members: group.members.length },
    committed: committed[0].partitions.map((p) => ({ partition: p.partition, offset: Number(p.offset) })),
  }) + "\n");
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
