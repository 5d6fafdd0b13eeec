// One turn's trace through a spawned harness node (issue 19, traces): the host records its spans to an
// in-memory exporter; the node, a separate process configured only by the standard OTEL_* environment it
// inherits, exports over OTLP/HTTP to a loopback collector. The tree: the Exec RPC span, the turn under
// it, the model call and journal commits under the turn, and the node's Connect span continuing the same
// trace (W3C traceparent over gRPC metadata) with the client's x-request-id forwarded to it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type HarnessHostClient } from "../../src/client/index.js";
import type { Host } from "../../src/host/host.js";
import { startTracing, stopTracing } from "../../src/obs/trace.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { silentLog } from "../../src/obs/log.js";
import { closeAll, openTestHost } from "../tiers/helpers.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

const REQUEST_ID = "trace-test-request-0001";
const exporter = new InMemorySpanExporter();
const nodeSpans: OtlpSpan[] = [];
let collector: Server;
let host: Host;
let server: RunningServer;
let client: HarnessHostClient;
const saved = { ...process.env };

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const doc = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
      for (const rs of doc.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) nodeSpans.push(...(ss.spans ?? []));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  // What the spawned node inherits: the standard variables only.
  process.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] =
    `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  process.env["OTEL_BSP_SCHEDULE_DELAY"] = "50";
  expect(await startTracing(process.env, { exporter })).toBe(true);
  host = await openTestHost({
    harnesses: [{ name: "secho", runtime: "spawned", target: "echo" }],
    nodeIdleMs: 0,
  });
  server = await startServer(host, {
    addr: "127.0.0.1:0",
    registryAddr: "127.0.0.1:0",
    httpAddr: "off",
    logger: silentLog,
  });
  client = connect({ address: server.addr, requestId: REQUEST_ID });
});

afterAll(async () => {
  client?.close();
  await server?.close(1000);
  await closeAll();
  await stopTracing();
  collector?.close();
  for (const k of ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("traces", () => {
  it("oneTurnsSpanTreeCrossesTheSpawnedNode", async () => {
    const result = await client.sessions.exec({ harness: "secho", input: "hello" }).result();
    expect(result.outputs.length).toBeGreaterThan(0);
    await until("the host's Exec span", () =>
      exporter.getFinishedSpans().some((s) => s.name.endsWith("Sessions/Exec")),
    );
    const spans = exporter.getFinishedSpans();
    const byName = (n: string) => spans.filter((s) => s.name === n);
    const rpc = spans.find((s) => s.name === "agentsessions.v1.Sessions/Exec")!;
    expect(rpc.attributes["harnesshost.request_id"]).toBe(REQUEST_ID);
    const [turn] = byName("harnesshost.turn");
    expect(turn, spans.map((s) => s.name).join(", ")).toBeDefined();
    expect(parentOf(turn!)).toBe(rpc.spanContext().spanId);
    expect(turn!.attributes).toMatchObject({ "harnesshost.harness": "secho", "harnesshost.tier": "stateless" });
    expect(turn!.attributes["harnesshost.seq.to"]).toBeGreaterThan(0);
    const traceId = turn!.spanContext().traceId;
    const under = (s: ReadableSpan, ancestor: ReadableSpan): boolean => {
      for (let p = parentOf(s); p !== undefined; ) {
        if (p === ancestor.spanContext().spanId) return true;
        p = spans.find((x) => x.spanContext().spanId === p)?.parentSpanContext?.spanId;
      }
      return false;
    };
    const model = byName("harnesshost.model.call");
    expect(model.length).toBe(1);
    expect(under(model[0]!, turn!)).toBe(true);
    const commits = byName("harnesshost.journal.commit").filter((s) => under(s, turn!));
    expect(commits.length).toBeGreaterThan(0);
    expect(commits.every((s) => s.spanContext().traceId === traceId)).toBe(true);

    // The node's side: its Connect span continues the host's trace, parented by a host span of the turn.
    await until("the node's Connect span", () => nodeSpans.some((s) => s.name.endsWith("Harness/Connect")));
    const nodeConnect = nodeSpans.find((s) => s.name.endsWith("Harness/Connect"))!;
    expect(nodeConnect.traceId).toBe(traceId);
    const parent = spans.find((s) => s.spanContext().spanId === nodeConnect.parentSpanId);
    expect(parent, "the node span's parent is a host span").toBeDefined();
    expect(parent === turn || under(parent!, turn!)).toBe(true);
    const requestId = nodeConnect.attributes?.find((a) => a.key === "harnesshost.request_id")?.value.stringValue;
    expect(requestId).toBe(REQUEST_ID);

    // The trace tree, printed for the record (names only).
    const tree = (s: ReadableSpan, depth: number): string[] => [
      `${"  ".repeat(depth)}${s.name}`,
      ...spans.filter((c) => parentOf(c) === s.spanContext().spanId).flatMap((c) => tree(c, depth + 1)),
      ...(s === parent ? [`${"  ".repeat(depth + 1)}[node] ${nodeConnect.name}`] : []),
    ];
    console.log(tree(rpc, 0).join("\n"));
  });
});
