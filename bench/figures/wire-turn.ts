// wire_turn_ratio: what the wire adds to a turn. One echo turn (the built-in `echo`, local runtime, SQLite
// journal) as a user of `harnesshost/client` sees it — `sessions.exec(...).result()` over gRPC on
// 127.0.0.1 to an in-process server (Host + startServer, the services and interceptors `serve` runs) —
// against the same turn on the same host called in process (`Placer.exec`), in alternating blocks after
// a warm-up. A block's first turn is not counted: it carries what the other side left running (a wire
// call's end — its status, the server's bookkeeping — goes on after `result()` resolved), so neither side
// is charged the other's work; a wire turn is charged its predecessor's end, as a client's next turn is.
// Invariant: every turn, wire and in-process, must return its own echo, or the figure crashes instead
// of reporting a number; the two sides run on the same host, journal and session kind.
import { connect } from "../../src/client/index.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { messageText, textMessage } from "../../src/model/text.js";
import { startServer } from "../../src/server/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { promptText } from "../lib/echo-turns.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult } from "../lib/types.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
/** A fresh session every this many turns of each side, so history length stays alike on both. */
const TURNS_PER_SESSION = 50;
/** Turns counted per block of one side; each block runs one turn more, its first, which is not counted. */
const BLOCK = 10;

export const wireTurn: Figure = {
  key: "wire_turn_ratio",
  title: "echo turn through harnesshost/client over gRPC (127.0.0.1) vs the same turn in process, p50",
  async run(opts): Promise<FigureResult> {
    const turns = opts.quick ? 6 : 200;
    const warmup = opts.quick ? 2 : 30;
    const dir = scratchDir("wire-turn");
    const host = await Host.open({ dataDir: dir.path }, { journal: await openJournal(dir.file("journal.db")) });
    const server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: SILENT });
    const client = connect({ address: server.addr });
    try {
      let wireSession = "";
      let localSession = "";
      const wire = async (i: number): Promise<number> => {
        if (i % TURNS_PER_SESSION === 0)
          wireSession = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
        const text = promptText(i);
        const t0 = performance.now();
        const result = await client.sessions.exec({ session: wireSession, input: text }).result();
        const ms = performance.now() - t0;
        if (result.outputs.at(-1) !== `echo:${text}`)
          throw new Error(`wire turn ${i}: answer ${JSON.stringify(result.outputs)}`);
        return ms;
      };
      const local = async (i: number): Promise<number> => {
        if (i % TURNS_PER_SESSION === 0) localSession = (await host.createSession({ harness: "echo" })).uid;
        const text = promptText(i);
        const t0 = performance.now();
        const result = await host.placer.exec({
          session: localSession,
          inputs: [textMessage("user", text)],
          signal: new AbortController().signal,
        });
        const ms = performance.now() - t0;
        const out = result.records.find((r) => r.event.kind === EventKind.EVENT_OUTPUT)?.event;
        const answer = out?.body.case === "message" ? messageText(out.body.value) : undefined;
        if (answer !== `echo:${text}`) throw new Error(`in-process turn ${i}: answer ${JSON.stringify(answer)}`);
        return ms;
      };
      const wireMs: number[] = [];
      const localMs: number[] = [];
      const block = Math.min(BLOCK, turns);
      let wireTurns = 0;
      let localTurns = 0;
      /** One block of a side: `block + 1` turns, the first not counted (it carries the other side's end). */
      const run = async (side: "wire" | "local", counted: boolean): Promise<void> => {
        for (let k = 0; k <= block; k++) {
          const ms = side === "wire" ? await wire(wireTurns++) : await local(localTurns++);
          if (counted && k > 0) (side === "wire" ? wireMs : localMs).push(ms);
        }
      };
      // Warm-up, then pairs of blocks; which side goes first alternates, so drift hits both alike.
      for (let done = 0; done < warmup; done += block) await run(done % (2 * block) === 0 ? "wire" : "local", false);
      for (let pair = 0; wireMs.length < turns; pair++) {
        const first = pair % 2 === 0 ? "wire" : "local";
        await run(first, true);
        await run(first === "wire" ? "local" : "wire", true);
      }
      const ratio = median(wireMs) / median(localMs);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: { ...sampleOf(wireMs.map(round), "ms"), p99: round(percentile(wireMs, 99)) },
        baseline: {
          ...sampleOf(localMs.map(round), "ms"),
          p99: round(percentile(localMs, 99)),
          what: "the same echo turn in process (Placer.exec on the same host)",
        },
        ratio: round(ratio),
        target: { op: "<=", value: 2 },
        details: {
          transport: "tcp 127.0.0.1",
          client: "harnesshost/client sessions.exec(...).result()",
          harness: "echo (local runtime), SQLite journal",
          turns: wireMs.length,
          block: `${block} counted turns per block of one side, alternating; each block's first turn not counted`,
          wireMinusLocalMs: round(median(wireMs) - median(localMs)),
        },
      };
    } finally {
      client.close();
      await server.close(1000);
      await host.close();
      dir.dispose();
    }
  },
};
