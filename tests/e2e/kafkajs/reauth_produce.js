// kafkajs 2.2.4 over SASL_PLAINTEXT against a kcoord server whose sessions expire
// (connections.max.reauth.ms): send one message every 200 ms to TOPIC for SECONDS seconds,
// then print how many were acknowledged as one JSON line. kafkajs re-authenticates on the
// same connection when its session is within THRESHOLD_MS of the lifetime the broker gave.
// Usage: node reauth_produce.js BOOTSTRAP MECHANISM USER PASSWORD TOPIC SECONDS THRESHOLD_MS
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, mechanism, username, password, topic, secondsText, thresholdText] =
  process.argv.slice(2);
const kafka = new Kafka({
  clientId: "kafkajs-reauth-e2e",
  brokers: [bootstrap],
  logLevel: logLevel.ERROR,
  sasl: { mechanism, username, password },
  reauthenticationThreshold: Number(thresholdText),
  retry: { retries: 0 },
});

async function main() {
  const producer = kafka.producer();
  await producer.connect();
  const end = Date.now() + Number(secondsText) * 1000;
  let acknowledged = 0;
  while (Date.now() < end) {
    await producer.send({ topic, messages: [{ value: `v${acknowledged}` }] });
    acknowledged += 1;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await producer.disconnect();
  process.stdout.write(JSON.stringify({ acknowledged }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
