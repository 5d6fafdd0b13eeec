// Console and HTTP-listener figures (docs/performance.md, "Console"): what a page of the Sessions view,
// a timeline window and the console's first paint cost at 10,000 sessions and on a 10,000-record
// session. Invariant: it reports, it never judges; each HTTP figure is shown beside the same read made
// directly on the journal in the same run (the raw baseline), as a ratio.
// Usage: npx tsx bench/console.ts [--sessions 10000] [--records 10000] [--runs 15]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { Sessions } from "../src/gen/agentsessions/v1/session_pb.js";
import { Console } from "../src/gen/harnesshost/v1/console_pb.js";
import { newSessionUid } from "../src/controller/ids.js";
import { Host } from "../src/host/host.js";
import { startServer } from "../src/server/server.js";
import { createClient as createGrpcClient } from "../src/wire/index.js";
import { launchChromium } from "../test/console/chromium.js";
import { buildConsole } from "../test/console/console-host.js";
import { echoEventStream } from "./lib/echo-turns.js";
import { median, round } from "./lib/stats.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "10000" },
    records: { type: "string", default: "10000" },
    runs: { type: "string", default: "15" },
  },
});
const SESSIONS = Number(values.sessions);
const RECORDS = Number(values.records);
const RUNS = Number(values.runs);
const PAGE = 50;
const WINDOW = 100;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

const dir = mkdtempSync(join(tmpdir(), "hh-bench-console-"));
const consoleDir = await buildConsole();
process.env["HARNESSHOST_CONSOLE_DIR"] = consoleDir;
const host = await Host.open({ dataDir: dir, nodeIdleMs: 0 });
const server = await startServer(host, {
  addr: "127.0.0.1:0",
  registryAddr: "127.0.0.1:0",
  httpAddr: "127.0.0.1:0",
  logger: pino({ level: "silent" }),
});
const url = server.httpUrl ?? "";
/** figure, HTTP ms, the same call over gRPC (ms), the raw journal read (ms) and what that is. */
const rows: [string, number, number | undefined, number | undefined, string][] = [];
try {
  const seedStart = performance.now();
  for (let i = 0; i < SESSIONS; i++)
    await host.journal.createSession({ uid: newSessionUid(), project: "default", harness: "echo" });
  const long = newSessionUid();
  await host.journal.createSession({ uid: long, project: "default", harness: "echo" });
  const fence = await host.journal.newFence(long);
  await host.journal.appendBatch(long, 0, fence, echoEventStream(RECORDS));
  console.error(
    `seeded ${SESSIONS} sessions and one of ${RECORDS} records in ${round(performance.now() - seedStart)} ms`,
  );

  const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
  const sessions = createClient(Sessions, transport);
  const views = createClient(Console, transport);
  const grpc = createGrpcClient(Sessions, server.addr);

  // A page deep in the list: walk the cursors once to find page 100's.
  let deepToken = "";
  for (let p = 1; p < Math.min(100, Math.floor(SESSIONS / PAGE)); p++)
    deepToken = (await host.journal.listSessions({ project: "default", pageSize: PAGE, pageToken: deepToken }))
      .nextPageToken;

  // Every raw (journal) read first: they are synchronous SQLite work, and a long stretch of it between
  // two HTTP calls lets the server close the idle keep-alive socket unnoticed (a reset on the next call).
  const from = BigInt(Math.max(1, RECORDS - WINDOW + 1));
  const rawPage = await timed(() => host.journal.listSessions({ project: "default", pageSize: PAGE, pageToken: "" }));
  const rawDeep = await timed(() =>
    host.journal.listSessions({ project: "default", pageSize: PAGE, pageToken: deepToken }),
  );
  const rawWindow = await timed(() => host.journal.readRange(long, Number(from), RECORDS));
  const rawVerify = await timed(() => host.journal.verify(long));
  rows.push([
    `Sessions page (${PAGE}), first page`,
    await timed(() => sessions.listSessions({ pageSize: PAGE })),
    await timed(() => grpc.listSessions({ pageSize: PAGE })),
    rawPage,
    "journal.listSessions (no projection, no HTTP)",
  ]);
  rows.push([
    `Sessions page (${PAGE}), page 100`,
    await timed(() => sessions.listSessions({ pageSize: PAGE, pageToken: deepToken })),
    await timed(() => grpc.listSessions({ pageSize: PAGE, pageToken: deepToken })),
    rawDeep,
    "journal.listSessions of the same page",
  ]);
  // The Sessions view's own call (Console.ListSessions): a filter every session matches, and one none
  // does (every seeded session is NONE), which reads the whole project to answer an empty page.
  const grpcViews = createGrpcClient(Console, server.addr);
  const rawNone = await timed(() =>
    host.journal.listSessions({ project: "default", pageSize: PAGE, pageToken: "", computeStates: ["COLD"] }),
  );
  rows.push([
    `Filtered page (${PAGE}), harness=echo (every session matches)`,
    await timed(() => views.listSessions({ pageSize: PAGE, harness: "echo" })),
    await timed(() => grpcViews.listSessions({ pageSize: PAGE, harness: "echo" })),
    rawPage,
    "journal.listSessions, unfiltered first page",
  ]);
  rows.push([
    `Filtered page, state=cold (no session of ${SESSIONS} matches)`,
    await timed(() => views.listSessions({ pageSize: PAGE, states: ["cold"] })),
    await timed(() => grpcViews.listSessions({ pageSize: PAGE, states: ["cold"] })),
    rawNone,
    "journal.listSessions with the same filter",
  ]);
  grpcViews.close();
  rows.push([
    `Timeline window (${WINDOW} records of ${RECORDS})`,
    await timed(async () => {
      for await (const _ of sessions.replay({ session: long, fromSeq: from, toSeq: BigInt(RECORDS) }));
    }),
    await timed(async () => {
      for await (const _ of grpc.replay({ session: long, fromSeq: from, toSeq: BigInt(RECORDS) }));
    }),
    rawWindow,
    "journal.readRange of the same window",
  ]);
  rows.push([
    `GetSession of the ${RECORDS}-record session`,
    await timed(() => sessions.getSession({ uid: long })),
    await timed(() => grpc.getSession({ uid: long })),
    undefined,
    "",
  ]);
  rows.push([
    `InspectSession (chain of ${RECORDS} + children among ${SESSIONS})`,
    await timed(() => views.inspectSession({ session: long })),
    undefined,
    rawVerify,
    "journal.verify alone",
  ]);
  rows.push([
    "ListWaiting, one call (500 sessions looked at)",
    await timed(() => views.listWaiting({})),
    undefined,
    undefined,
    "",
  ]);
  grpc.close();

  const browser = await launchChromium();
  try {
    // Time to the first rows on a fresh page; then the page is left until it is idle (the Session
    // view's chain check done) so the next run starts on an idle host.
    const paint = async (hash: string, selector: string, idle?: string): Promise<number> => {
      const page = await browser.newPage();
      try {
        const t0 = performance.now();
        await page.goto(`${url}${hash}`);
        await page.locator(selector).first().waitFor({ timeout: 60_000 });
        const ms = performance.now() - t0;
        if (idle !== undefined) await page.locator(idle).first().waitFor({ timeout: 120_000 });
        return ms;
      } finally {
        await page.close();
      }
    };
    rows.push([
      "Console first paint: Sessions view with its first page",
      await timed(() => paint("#/sessions", "[data-testid=sessions] tbody tr")),
      undefined,
      undefined,
      "",
    ]);
    rows.push([
      `Console first paint: Session view of the ${RECORDS}-record session (timeline window)`,
      await timed(() => paint(`#/session/${long}`, "[data-testid=timeline] tbody tr", "[data-testid=chain]")),
      undefined,
      undefined,
      "",
    ]);
  } finally {
    await browser.close();
  }
} finally {
  await server.close(1000);
  await host.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(consoleDir, { recursive: true, force: true });
}

const cell = (x: number | undefined): string => (x === undefined ? "—" : String(round(x)));
const ratio = (a: number, b: number | undefined): string => (b === undefined ? "—" : `${round(a / b)}×`);
console.log(`| figure (median of ${RUNS}) | HTTP ms | gRPC ms | HTTP ÷ gRPC | raw ms | HTTP ÷ raw | raw is |`);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [what, ms, grpcMs, raw, baseline] of rows)
  console.log(
    `| ${what} | ${cell(ms)} | ${cell(grpcMs)} | ${ratio(ms, grpcMs)} | ${cell(raw)} | ${ratio(ms, raw)} | ${baseline || "—"} |`,
  );
