import { connect } from "../../src/client/index.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { startServer } from "../../src/server/index.js";
import { scratchDir } from "../lib/tmp.js";
const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const dir = scratchDir("loop", "memory");
const host = await Host.open({ dataDir: dir.path }, { journal: await openJournal(dir.file("journal.db")) });
const server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: SILENT });
const client = connect({ address: server.addr });
let uid = "";
const N = Number(process.argv[2] ?? 3000);
for (let i = 0; i < 300; i++) {
  if (i % 50 === 0) uid = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
  await client.sessions.exec({ session: uid, input: `hi ${i}` }).result();
}
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  if (i % 50 === 0) uid = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
  await client.sessions.exec({ session: uid, input: `hi ${i}` }).result();
}
console.log("per turn ms", ((performance.now() - t0) / N).toFixed(3), "cpu", ((u) => (u.user + u.system) / 1000 / N)(process.cpuUsage(c0)));
client.close(); await server.close(1000); await host.close(); dir.dispose();
