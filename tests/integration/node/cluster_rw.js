// ioredis Cluster against a running cluster (tests/integration/test_cluster_ioredis.py): writes
// and reads back N keys; then one empty slot is handed to another node behind the client's back
// (CLUSTER SETSLOT NODE on both nodes), so the client's next write there meets MOVED and must
// follow it. Prints one JSON line with what it saw.
// Usage: node cluster_rw.js <port> <count>
"use strict";
const Redis = require("ioredis");
const keySlot = require("cluster-key-slot");

async function main() {
  const port = Number(process.argv[2]);
  const count = Number(process.argv[3]);
  const cluster = new Redis.Cluster([{ host: "127.0.0.1", port }], {
    redisOptions: { connectTimeout: 5000 },
    slotsRefreshTimeout: 5000,
  });
  const redirects = [];
  const handleError = cluster.handleError.bind(cluster);
  cluster.handleError = (error, ttl, handlers) => {
    redirects.push(error.message);
    return handleError(error, ttl, handlers);
  };
  const keys = Array.from({ length: count }, (_, i) => `io:${i}`);
  await Promise.all(keys.map((k, i) => cluster.set(k, `v${i}`)));
  const values = await Promise.all(keys.map((k) => cluster.get(k)));
  const wrong = values.filter((v, i) => v !== `v${i}`).length;

  const probe = "moved-probe";
  const slot = keySlot(probe);
  const [ownerHost, ownerPort] = cluster.slots[slot][0].split(":");
  const otherPort = cluster
    .nodes("master")
    .map((n) => n.options.port)
    .find((p) => p !== Number(ownerPort));
  const owner = new Redis({ host: ownerHost, port: Number(ownerPort) });
  const other = new Redis({ host: ownerHost, port: otherPort });
  const otherId = await other.call("CLUSTER", "MYID");
  await other.call("CLUSTER", "SETSLOT", slot, "NODE", otherId);
  await owner.call("CLUSTER", "SETSLOT", slot, "NODE", otherId);
  const reply = await cluster.set(probe, "moved-here");
  const there = await other.get(probe);
  const viaCluster = await cluster.get(probe);
  console.log(
    JSON.stringify({ wrong, slot, otherPort, reply, there, viaCluster, redirects }),
  );
  owner.disconnect();
  other.disconnect();
  cluster.disconnect();
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e) }));
  process.exit(1);
});
