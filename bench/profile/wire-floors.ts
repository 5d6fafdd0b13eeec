// The wire turn against its floors, in one process on 127.0.0.1 (wire_turn_ratio's set-up: the built-in
// echo, an in-process server, harnesshost/client `result()`), wall p50 per kind in alternating blocks:
//   raw stream   a bare grpc-js server stream of the seven messages a `records`-shape turn sends (bytes
//                only: no protobuf, no interceptor, no host) — what grpc-js and Node's HTTP/2 cost alone;
//   wire, stub   the client-observed turn through the real client, server, interceptors and Exec stream,
//                with Placer.exec replaced by one that reports the same five records and commits nothing
//                — everything the wire adds, without the turn;
//   wire         the client-observed turn;
//   in process   Placer.exec of the same turn (the figure's baseline).
// The stub runs on a session of its own, the others on a fresh session every 50 turns. Journal on tmpfs
// by default (MEM=0: on disk, as the figure), so fsync waits do not swamp what the wire adds.
// Invariant: it reports, never judges.
// Usage: npx tsx bench/profile/wire-floors.ts [turns per kind]
import { Client, credentials, Server, type ServerWritableStream, type ServiceDefinition } from "@grpc/grpc-js";
import { connect } from "../../src/client/index.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import type { TurnResult } from "../../src/controller/index.js";
import type { ExecRequest } from "../../src/placement/index.js";
import { textMessage } from "../../src/model/text.js";
import { startServer } from "../../src/server/index.js";
import { bindInsecure, bytesMethod, identity } from "../lib/grpc-raw.js";
import { promptText } from "../lib/echo-turns.js";
import { median, round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const turns = Number(process.argv[2] ?? 400);
const BLOCK = 20;
const MESSAGES = 7;
const STREAM: ServiceDefinition = { stream: bytesMethod("/bench.Raw/Stream", false, true) };

const dir = scratchDir("wire-floors", process.env.MEM === "0" ? "disk" : "memory");
const host = await Host.open({ dataDir: dir.path }, { journal: await openJournal(dir.file("journal.db")) });
const server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: SILENT });
const client = connect({ address: server.addr });

const raw = new Server();
const frame = Buffer.alloc(300, 1);
raw.addService(STREAM, {
  stream: async (call: ServerWritableStream<Buffer, Buffer>) => {
    for (let i = 0; i < MESSAGES; i++) await new Promise<void>((resolve) => call.write(frame, () => resolve()));
    call.end();
  },
});
const rawAddr = await bindInsecure(raw, "127.0.0.1:0");
const rawClient = new Client(rawAddr.target, credentials.createInsecure());
const rawStream = (): Promise<void> =>
  new Promise((resolve, reject) => {
    const call = rawClient.makeServerStreamRequest<Buffer, Buffer>("/bench.Raw/Stream", identity, identity, frame);
    call.on("data", () => undefined);
    call.on("error", () => undefined);
    call.on("status", (st) => (st.code === 0 ? resolve() : reject(new Error(st.details))));
  });

// The stub: the same five records, reported and returned as a real turn's, nothing committed.
const stubSession = (await host.createSession({ harness: "echo" })).uid;
const signal = new AbortController().signal;
const canned = await host.placer.exec({ session: stubSession, inputs: [textMessage("user", promptText(0))], signal });
const realExec = host.placer.exec.bind(host.placer);
host.placer.exec = async (req: ExecRequest): Promise<TurnResult> => {
  if (req.session !== stubSession) return realExec(req);
  for (const rec of canned.records) req.observer?.onRecord?.(rec);
  return canned;
};

let wireSession = "";
let localSession = "";
const kinds: Record<string, (i: number) => Promise<void>> = {
  "raw stream": rawStream,
  "wire, stub": async () => {
    await client.sessions.exec({ session: stubSession, input: promptText(0) }).result();
  },
  wire: async (i) => {
    if (i % 50 === 0) wireSession = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
    await client.sessions.exec({ session: wireSession, input: promptText(i) }).result();
  },
  "in process": async (i) => {
    if (i % 50 === 0) localSession = (await host.createSession({ harness: "echo" })).uid;
    await host.placer.exec({ session: localSession, inputs: [textMessage("user", promptText(i))], signal });
  },
};
const wall = new Map<string, number[]>();
for (let i = 0; i < 2 * BLOCK; i++) for (const run of Object.values(kinds)) await run(i); // warm-up
for (let b = 0; b < turns / BLOCK; b++) {
  for (const [name, run] of Object.entries(kinds)) {
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now();
      await run(b * BLOCK + i);
      wall.set(name, [...(wall.get(name) ?? []), performance.now() - t0]);
    }
  }
}
for (const [name, ms] of wall) console.log(`${name.padEnd(12)} wall p50 ${round(median(ms))} ms`);
rawClient.close();
raw.forceShutdown();
client.close();
await server.close(1000);
await host.close();
dir.dispose();
