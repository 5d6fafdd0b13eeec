// The experiment behind the turn stream (docs/performance.md, "The wire turn", fifth pass; built since
// as harnesshost.v1.Turns, docs/protocol.md §21). One process, SQLite journal on disk, the built-in echo:
//   wire         the client-observed turn (harnesshost/client `exec(...).result()` to startServer — over
//                the product's turn stream since the sixth pass);
//   turn stream  the same `final` Exec path (execUpdates) run per message of one raw grpc-js bidi stream
//                opened once: a turn is one request message and one answer holding the packed frames,
//                which the caller unpacks and decodes — no call set-up, headers, trailers, interceptor,
//                per-call signals, per-turn log line, metrics or client bookkeeping (the floor);
//   in process   Placer.exec of the same turn (wire_turn_ratio's baseline).
// In blocks of 10 per kind (each block's first turn not counted, as the figure counts), a fresh
// session every 50 turns of each kind. Invariant: it reports, never judges; every turn must answer
// with its echo's frames or the script stops.
// Usage: npx tsx bench/profile/turn-stream.ts [blocks per kind]
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Server, type ServerDuplexStream } from "@grpc/grpc-js";
import { connect } from "../../src/client/index.js";
import { ExecRequestSchema, ExecUpdateSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { execUpdates } from "../../src/server/exec-stream.js";
import { startServer } from "../../src/server/index.js";
import { unpackFrames } from "../../src/wire/exec-updates.js";
import { EncodedResponse } from "../../src/wire/index.js";
import { promptText } from "../lib/echo-turns.js";
import { bindInsecure, bytesMethod, identity } from "../lib/grpc-raw.js";
import { median, round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const BLOCKS = Number(process.argv[2] ?? 60);
const BLOCK = 10;
const WARM_BLOCKS = 6;

const dir = scratchDir("turn-stream", "disk");
const host = await Host.open({ dataDir: dir.path }, { journal: await openJournal(dir.file("journal.db")) });
const server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: SILENT });
const client = connect({ address: server.addr });

// The turn stream: each request message runs one `final` Exec; its answer is the packed frames.
const raw = new Server();
raw.addService(
  { exec: bytesMethod("/bench.Turns/Exec", true, true) },
  {
    exec: (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.on("data", async (bytes: Buffer) => {
        const out: Buffer[] = [];
        const req = fromBinary(ExecRequestSchema, bytes);
        for await (const u of execUpdates(host, req, new AbortController().signal, undefined, "", "final"))
          if (u instanceof EncodedResponse) out.push(u.bytes);
        call.write(Buffer.concat(out));
      });
      call.on("end", () => call.end());
    },
  },
);
const rawClient = new Client((await bindInsecure(raw, "127.0.0.1:0")).target, credentials.createInsecure(), {
  "grpc.enable_channelz": 0,
});
const stream = rawClient.makeBidiStreamRequest<Buffer, Buffer>("/bench.Turns/Exec", identity, identity);
let answer: ((b: Buffer) => void) | undefined;
stream.on("data", (b: Buffer) => {
  const take = answer;
  answer = undefined;
  take?.(b);
});
stream.on("error", () => undefined);

const signal = new AbortController().signal;
const sessions = { wire: "", stream: "", local: "" };
const counts = { wire: 0, stream: 0, local: 0 };
type Kind = keyof typeof counts;
/** The next turn of `kind` (its session, fresh every 50 turns), and its prompt. */
async function next(kind: Kind): Promise<string> {
  const i = counts[kind]++;
  if (i % 50 === 0)
    sessions[kind] =
      kind === "wire"
        ? ((await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "")
        : (await host.createSession({ harness: "echo" })).uid;
  return promptText(i);
}
const kinds: Record<Kind, () => Promise<number>> = {
  wire: async () => {
    const text = await next("wire");
    const t0 = performance.now();
    const r = await client.sessions.exec({ session: sessions.wire, input: text }).result();
    const ms = performance.now() - t0;
    if (r.outputs.at(-1) !== `echo:${text}`) throw new Error(`wire: ${JSON.stringify(r.outputs)}`);
    return ms;
  },
  stream: async () => {
    const text = await next("stream");
    const t0 = performance.now();
    const req = create(ExecRequestSchema, { session: sessions.stream, inputs: [textMessage("user", text)] });
    const packed = await new Promise<Buffer>((resolve) => {
      answer = resolve;
      stream.write(Buffer.from(toBinary(ExecRequestSchema, req)));
    });
    const frames = (unpackFrames(packed) ?? [packed]).map((f) => fromBinary(ExecUpdateSchema, f));
    const ms = performance.now() - t0;
    if (frames.at(-1)?.update.case !== "session") throw new Error(`turn stream: ${frames.length} frames`);
    return ms;
  },
  local: async () => {
    const text = await next("local");
    const t0 = performance.now();
    await host.placer.exec({ session: sessions.local, inputs: [textMessage("user", text)], signal });
    return performance.now() - t0;
  },
};
const ms: Record<Kind, number[]> = { wire: [], stream: [], local: [] };
for (let b = 0; b < WARM_BLOCKS + BLOCKS; b++) {
  const order = (b % 2 === 0 ? ["wire", "stream", "local"] : ["local", "stream", "wire"]) as Kind[];
  for (const kind of order) {
    for (let k = 0; k <= BLOCK; k++) {
      const t = await kinds[kind]();
      if (b >= WARM_BLOCKS && k > 0) ms[kind].push(t);
    }
  }
}
const local = median(ms.local);
for (const kind of ["wire", "stream", "local"] as Kind[])
  console.log(
    `${kind.padEnd(7)} p50 ${round(median(ms[kind]))} ms  ×${round(median(ms[kind]) / local)} the in-process turn`,
  );
stream.end();
rawClient.close();
raw.forceShutdown();
client.close();
await server.close(1000);
await host.close();
dir.dispose();
