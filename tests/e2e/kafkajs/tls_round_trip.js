// kafkajs 2.2.4 over TLS against a kcoord server: produce COUNT messages to TOPIC, consume
// them in GROUP, and print the values read as one JSON line. MECHANISM "none" is SSL alone;
// "plain", "scram-sha-256" or "scram-sha-512" is SASL_SSL as USER/PASSWORD. The server's
// certificate is checked against CA (a PEM file).
// Usage: node tls_round_trip.js BOOTSTRAP CA MECHANISM USER PASSWORD TOPIC GROUP COUNT
"use strict";
const fs = require("fs");
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, ca, mechanism, username, password, topic, groupId, countText] =
  process.argv.slice(2);
const count = Number(countText);
const kafka = new Kafka({
  clientId: "kafkajs-tls-e2e",
  brokers: [bootstrap],
  logLevel: logLevel.ERROR,
  ssl: { ca: [fs.readFileSync(ca, "utf-8")], servername: "localhost" },
  sasl: mechanism === "none" ? undefined : { mechanism, username, password },
  retry: { retries: 5, initialRetryTime: 100 },
});

async function main() {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: count }, (_, i) => ({ value: `v${i}` })),
  });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${values.length} of ${count}`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value.toString());
        if (values.length === count) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  process.stdout.write(JSON.stringify({ values: values.sort() }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
