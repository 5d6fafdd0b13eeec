// turn_latency_ratio: one echo turn as a client sees it — Sessions.Exec from a grpc-js client to an
// in-process `serve` (Host + startServer, same services, interceptors and SQLite journal as the
// command), placed on a `spawned` echo harness whose node is a separate process behind a unix socket —
// against a raw grpc-js unary round trip (bytes in, same bytes out, no protobuf) on the same transport
// kind. Both run in this process, alternating, after a warm-up. Each repetition also times three
// floors of the same turn in place (details): the raw message pattern (rawTurnShape*), the same with
// the two durable commits made as raw SQLite transactions (floor*), and the contract floor — the
// pattern with the wire contract's protobuf messages and the real journal's commits but none of the
// host's logic (contract*, bench/lib/contract-turn-shape.ts). Invariant: every turn, ours and the
// floors', must stream back its own echo and end, or the figure crashes instead of reporting a number.
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Host } from "../../src/host/host.js";
import { messageText, textMessage } from "../../src/model/text.js";
import { createClient } from "../../src/wire/index.js";
import { guardImport } from "../lib/lazy.js";
import { rawCommitMs } from "../lib/raw-commit.js";
import { startRawPing } from "../lib/raw-ping.js";
import { startRawTurnShape } from "../lib/raw-turn-shape.js";
import { startContractTurnShape } from "../lib/contract-turn-shape.js";
import { newTally, timed, type Tally } from "../lib/timed.js";
import { DURABLE_JOURNAL_METHODS } from "../../src/journal/types.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { promptText } from "../lib/echo-turns.js";
import { scratchDir, type ScratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, Reading, RunOptions } from "../lib/types.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
/** The harness under test: the built-in echo, served by a host-spawned node over a unix socket. */
const HARNESS = "necho";

type Transport = "unix" | "tcp";

interface TransportRun {
  readonly turnMs: number[];
  readonly rawMs: number[];
  /** The raw grpc-js floor of the turn's message pattern (bench/lib/raw-turn-shape.ts). */
  readonly shapeMs: number[];
  /** The same with the turn's two durable commits made in place as raw SQLite transactions. */
  readonly floorMs: number[];
  /** The same pattern with the contract's protobuf messages and real journal commits (bench/lib/contract-turn-shape.ts). */
  readonly contractMs: number[];
  /** ms of the contract floor's two journal commits, per turn. */
  readonly contractJournalMs: number[];
  /** Per measured turn: ms spent in journal calls, and how many durable commits it made. */
  readonly journalMs: number[];
  readonly commits: number[];
}

async function measure(
  host: Host,
  tally: Tally,
  dir: ScratchDir,
  transport: Transport,
  turns: number,
  warmup: number,
): Promise<TransportRun> {
  const { startServer } = await guardImport(
    () => import("../../src/server/index.js"),
    "gRPC Sessions server (src/server)",
  );
  const addr = transport === "unix" ? `unix://${dir.file(`sessions-${transport}.sock`)}` : "127.0.0.1:0";
  const rawAddr = transport === "unix" ? `unix://${dir.file(`raw-${transport}.sock`)}` : "127.0.0.1:0";
  const server = await startServer(host, { addr, registryAddr: "127.0.0.1:0", logger: SILENT });
  const raw = await startRawPing(rawAddr);
  const shapeAddr = transport === "unix" ? `unix://${dir.file(`shape-${transport}.sock`)}` : "127.0.0.1:0";
  const shape = await startRawTurnShape(shapeAddr, dir.file(`shape-node-${transport}.sock`));
  const floorAddr = transport === "unix" ? `unix://${dir.file(`floor-${transport}.sock`)}` : "127.0.0.1:0";
  const floorShape = await startRawTurnShape(floorAddr, dir.file(`floor-node-${transport}.sock`), {
    commitDb: dir.file(`floor-${transport}.db`),
  });
  const contractAddr = transport === "unix" ? `unix://${dir.file(`contract-${transport}.sock`)}` : "127.0.0.1:0";
  const { openJournal } = await import("../../src/journal/index.js");
  const contractJournal = await openJournal(dir.file(`contract-${transport}.db`));
  const contract = await startContractTurnShape(
    contractAddr,
    dir.file(`contract-node-${transport}.sock`),
    contractJournal,
    `sess-contract-${transport}`,
  );
  const client = createClient(Sessions, server.addr);
  try {
    const created = await client.createSession({ session: { harness: HARNESS } });
    const session = created.metadata?.uid ?? "";
    if (session === "") throw new Error("CreateSession returned no uid");
    const turn = async (i: number): Promise<number> => {
      const text = promptText(i);
      const input = textMessage("user", text);
      const t0 = performance.now();
      let answer: string | undefined;
      let ended = false;
      for await (const update of client.exec({ session, inputs: [input] })) {
        if (update.update.case !== "record") continue;
        const event = update.update.value.event;
        if (event?.kind === EventKind.EVENT_OUTPUT && event.body.case === "message")
          answer = messageText(event.body.value);
        if (event?.kind === EventKind.EVENT_END) ended = true;
      }
      const ms = performance.now() - t0;
      if (!ended || answer !== `echo:${text}`)
        throw new Error(`turn ${i} over ${transport}: answer ${JSON.stringify(answer)}, ended=${ended}`);
      return ms;
    };
    const payload = Buffer.from(promptText(0));
    const ping = async (): Promise<number> => {
      const t0 = performance.now();
      const back = await raw.ping(payload);
      const ms = performance.now() - t0;
      if (back.length !== payload.length) throw new Error("raw ping returned other bytes");
      return ms;
    };
    const shapeTurn = async (which: typeof shape): Promise<number> => {
      const t0 = performance.now();
      await which.turn(payload);
      return performance.now() - t0;
    };
    const contractTurn = async (i: number): Promise<[number, number]> => {
      const t0 = performance.now();
      const journalMs = await contract.turn(promptText(i));
      return [performance.now() - t0, journalMs];
    };
    const out: TransportRun = {
      turnMs: [],
      rawMs: [],
      shapeMs: [],
      floorMs: [],
      contractMs: [],
      contractJournalMs: [],
      journalMs: [],
      commits: [],
    };
    for (let i = 0; i < warmup + turns; i++) {
      // Alternate the order so drift on a shared machine hits both alike.
      tally.reset();
      const first = i % 2 === 0 ? await turn(i) : await ping();
      const second = i % 2 === 0 ? await ping() : await turn(i);
      const journalMs = tally.ms();
      const commits = tally.calls(...DURABLE_JOURNAL_METHODS);
      const shapeOnly = await shapeTurn(shape);
      const floor = await shapeTurn(floorShape);
      const [contractFloor, contractJournal] = await contractTurn(i);
      if (i < warmup) continue;
      out.contractMs.push(contractFloor);
      out.contractJournalMs.push(contractJournal);
      out.journalMs.push(journalMs);
      out.commits.push(commits);
      out.turnMs.push(i % 2 === 0 ? first : second);
      out.rawMs.push(i % 2 === 0 ? second : first);
      out.shapeMs.push(shapeOnly);
      out.floorMs.push(floor);
    }
    return out;
  } finally {
    client.close();
    await raw.close();
    await shape.close();
    await floorShape.close();
    await contract.close();
    await contractJournal.close();
    await server.close(1000);
  }
}

function reading(run: TransportRun, transport: Transport, commitMs: number): Reading {
  const ratio = median(run.turnMs) / median(run.rawMs);
  const commits = median(run.commits);
  // What a turn costs at the least: the raw grpc-js cost of its message pattern (Exec stream + Connect
  // stream to a node process, no protobuf, no host) with its durable commits made in place.
  const shapeMs = median(run.shapeMs);
  const floorMs = median(run.floorMs);
  return {
    value: round(ratio),
    unit: "×",
    measured: { ...sampleOf(run.turnMs.map(round), "ms"), p99: round(percentile(run.turnMs, 99)) },
    baseline: {
      ...sampleOf(run.rawMs.map(round), "ms"),
      p99: round(percentile(run.rawMs, 99)),
      what: `raw grpc-js unary round trip (${transport})`,
    },
    ratio: round(ratio),
    target: { op: "<=", value: 5 },
    details: {
      transport,
      harness: "echo on the spawned runtime (node over unix socket)",
      turns: run.turnMs.length,
      journalWritesPerTurn: commits,
      journalMsPerTurn: round(median(run.journalMs)),
      rawCommitMsBackToBack: round(commitMs),
      rawTurnShapeMs: round(shapeMs),
      rawTurnShapeRatio: round(shapeMs / median(run.rawMs)),
      floorMs: round(floorMs),
      floorRatio: round(floorMs / median(run.rawMs)),
      overFloor: round(median(run.turnMs) / floorMs),
      contractTurnMs: round(median(run.contractMs)),
      contractJournalMs: round(median(run.contractJournalMs)),
      contractRatio: round(median(run.contractMs) / median(run.rawMs)),
      overContract: round(median(run.turnMs) / median(run.contractMs)),
    },
  };
}

export const turnLatency: Figure = {
  key: "turn_latency_ratio",
  extraKeys: ["turn_latency_tcp_ratio"],
  title: "echo turn over gRPC (serve + spawned echo node) vs raw grpc-js unary, p50",
  async run(opts: RunOptions): Promise<FigureResult> {
    const { Host } = await guardImport(() => import("../../src/host/index.js"), "src/host");
    const turns = opts.quick ? 5 : 60;
    const warmup = opts.quick ? 2 : 10;
    const { openJournal } = await import("../../src/journal/index.js");
    const dir = scratchDir("turn");
    const tally = newTally();
    const journal = timed(await openJournal(dir.file("journal.db")), tally);
    const host = await Host.open(
      {
        dataDir: dir.path,
        harnesses: [{ name: HARNESS, runtime: "spawned", target: "echo" }],
        defaultHarness: HARNESS,
        nodeIdleMs: 60_000,
      },
      { journal },
    );
    try {
      const unixRun = await measure(host, tally, dir, "unix", turns, warmup);
      const tcpRun = await measure(host, tally, dir, "tcp", turns, warmup);
      const commitMs = rawCommitMs(dir.file("raw-commit.db"), opts.quick ? 10 : 50);
      const unix = reading(unixRun, "unix", commitMs);
      const tcp = reading(tcpRun, "tcp", commitMs);
      return { status: "ok", ...unix, also: { turn_latency_tcp_ratio: tcp } };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
