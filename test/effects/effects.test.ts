// Typed post-commit effects (docs/protocol.md §13): validated at emit, refused commits when a key has no handler,
// dispatched after the commit in emission order outside the session lock, failures counted and never
// rolled back; the built-in audit, webhook and metrics handlers; counters in `get --json`.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { main } from "../../src/cli/run.js";
import { textMessage } from "../../src/controller/index.js";
import {
  defineEffect,
  EffectDispatcher,
  metricsCount,
  MetricsCounters,
  registerBuiltinEffects,
  webhookHandler,
  webhookPost,
  type EffectSnapshot,
} from "../../src/effects/index.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Host } from "../../src/host/host.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { closeAll, openTestHost, records, rejectsWithCode, signal } from "../tiers/helpers.js";

const emitter = new URL("./fixtures/emitter.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await closeAll();
});

/** A test effect whose handler records its calls, optionally failing. */
const testEffect = (key: string) => defineEffect(key, z.object({}).strict());

async function emitterHost(dispatcher: EffectDispatcher, config: Record<string, unknown> = {}): Promise<Host> {
  return openTestHost(
    { harnesses: [{ name: "emitter", runtime: "local", target: emitter }], ...config },
    { effects: dispatcher },
  );
}

async function run(host: Host, session: string, input: string) {
  return host.placer.exec({ session, inputs: [textMessage("user", input)], signal: signal() });
}

describe("defineEffect", () => {
  it("validates the payload at emit time with the schema's message", () => {
    const e = defineEffect("demo.thing", z.object({ n: z.number().int() }));
    expect(e({ n: 2 })).toEqual({ key: "demo.thing", payload: { n: 2 } });
    let caught: unknown;
    try {
      e({ n: 1.5 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HostError);
    expect((caught as HostError).code).toBe(ErrorCode.InvalidArgument);
    expect((caught as HostError).message).toMatch(/demo\.thing: invalid payload/);
    expect(() => defineEffect("NoDot", z.object({}))).toThrow(/<plugin>\.<name>/);
  });
});

describe("effects through a turn", () => {
  it("missing handler refuses the commit: the command's OUTPUT is not appended and nothing is dispatched", async () => {
    const dispatcher = new EffectDispatcher();
    const seen: string[] = [];
    dispatcher.register(testEffect("test.ok"), () => void seen.push("ok"));
    const host = await emitterHost(dispatcher);
    const s = (await host.createSession({ harness: "emitter" })).uid;
    await rejectsWithCode(run(host, s, "test.ok,missing.key"), ErrorCode.FailedPrecondition);
    const kinds = (await records(host, s)).map((r) => r.event.kind);
    expect(kinds).not.toContain(EventKind.EVENT_OUTPUT);
    expect(kinds).not.toContain(EventKind.EVENT_END);
    await host.placer.effectsIdle();
    expect(seen).toEqual([]);
  });

  it("an invalid payload is refused at emit time (INVALID_ARGUMENT), before any commit", async () => {
    const dispatcher = new EffectDispatcher();
    registerBuiltinEffects(dispatcher);
    const host = await emitterHost(dispatcher);
    const s = (await host.createSession({ harness: "emitter" })).uid;
    const res = await run(host, s, "bad");
    expect(res.outputs).toEqual([expect.stringMatching(/^invalid: effect metrics\.count: invalid payload/)]);
    const res2 = await run(host, s, "metrics.count");
    expect(res2.outputs).toEqual(["done"]);
  });

  it("effect handler failure does not roll back: the turn stands, the failure is counted, the next effect still runs", async () => {
    const dispatcher = new EffectDispatcher();
    const order: string[] = [];
    let busyDuringDispatch: boolean | undefined;
    let snap: EffectSnapshot | undefined;
    const metrics = new MetricsCounters();
    let hostRef: Host | undefined;
    dispatcher.register(testEffect("test.fail"), () => {
      order.push("fail");
      throw new Error("handler exploded");
    });
    dispatcher.register(
      testEffect("test.hang"),
      () => {
        order.push("hang");
        return new Promise<void>(() => undefined);
      },
      { timeoutMs: 50 },
    );
    dispatcher.register(metricsCount, (p, s) => {
      order.push("count");
      snap = s;
      busyDuringDispatch = hostRef?.placer.guard.isBusy(s.session);
      metrics.add(p.name, p.by);
    });
    const host = (hostRef = await emitterHost(dispatcher));
    const s = (await host.createSession({ harness: "emitter" })).uid;
    const res = await run(host, s, "test.fail,test.hang,metrics.count");
    expect(res.outputs).toEqual(["done"]);
    await host.placer.effectsIdle();
    expect(order).toEqual(["fail", "hang", "count"]);
    expect(metrics.get("turns")).toBe(1);
    expect(busyDuringDispatch).toBe(false);
    const head = await host.journal.head(s);
    expect(snap).toMatchObject({ session: s, lastSeq: head.seq, lastHash: head.hash });
    expect((await records(host, s)).map((r) => r.event.kind)).toContain(EventKind.EVENT_END);
    expect(dispatcher.counters(s)).toEqual({
      dispatched: { "metrics.count": 1 },
      failed: { "test.fail": 1, "test.hang": 1 },
    });
  });

  it("the audit handler writes one JSON line per committed turn; counters show in `get --json`", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hh-effects-"));
    const auditFile = join(dataDir, "audit.jsonl");
    const dispatcher = new EffectDispatcher();
    registerBuiltinEffects(dispatcher, { auditFile });
    dispatcher.register(testEffect("test.fail"), () => {
      throw new Error("no");
    });
    const audited = await emitterHost(dispatcher, { dataDir, auditFile });
    const s = (await audited.createSession({ harness: "emitter" })).uid;
    await run(audited, s, "test.fail");
    await audited.placer.effectsIdle();
    const lines = readFileSync(auditFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { session: string; event: string; seq: number });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ session: s, event: "turn.completed", seq: (await audited.journal.head(s)).seq });

    const server: RunningServer = await startServer(audited, {
      addr: "127.0.0.1:0",
      registryAddr: "127.0.0.1:0",
      logger: quiet,
    });
    cleanups.push(() => server.close(1000));
    const out: string[] = [];
    const code = await main(["get", "--server", server.addr, "--session", s, "--json"], {
      out: (t) => out.push(t),
      err: () => undefined,
    });
    expect(code).toBe(0);
    const doc = JSON.parse(out.join("")) as { effects?: unknown };
    expect(doc.effects).toEqual({ dispatched: { "audit.record": 1 }, failed: { "test.fail": 1 } });
  });
});

describe("webhook.post", () => {
  async function hookServer(statuses: number[]): Promise<{ url: string; hits: string[] }> {
    const hits: string[] = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        hits.push(body);
        res.statusCode = statuses[hits.length - 1] ?? 200;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const addr = server.address();
    if (typeof addr !== "object" || !addr) throw new Error("no address");
    return { url: `http://127.0.0.1:${addr.port}/hook`, hits };
  }

  const snap: EffectSnapshot = { session: "sess-x", lastSeq: 3, lastHash: "h", committedSeq: 3 };
  const fast = { maxAttempts: 4, initialBackoffMs: 0, maxBackoffMs: 0 };

  it("retries transient failures (503, 503, then 200): delivered once", async () => {
    const hook = await hookServer([503, 503, 200]);
    const dispatcher = new EffectDispatcher();
    dispatcher.register(webhookPost, webhookHandler(fast));
    const report = await dispatcher.dispatch(
      [{ effect: webhookPost({ url: hook.url, body: { turn: 1 } }), session: "sess-x", seq: 3 }],
      () => snap,
    );
    expect(report).toEqual({ attempted: 1, dispatched: 1, failed: 0 });
    expect(hook.hits).toEqual(['{"turn":1}', '{"turn":1}', '{"turn":1}']);
  });

  it("does not retry a refusal (400): one request, counted as failed", async () => {
    const hook = await hookServer([400]);
    const logged: object[] = [];
    const dispatcher = new EffectDispatcher({ warn: (fields) => void logged.push(fields) });
    dispatcher.register(webhookPost, webhookHandler(fast));
    const report = await dispatcher.dispatch(
      [{ effect: webhookPost({ url: hook.url, body: { secret: "s3cr3t" } }), session: "sess-x", seq: 3 }],
      () => snap,
    );
    expect(report).toEqual({ attempted: 1, dispatched: 0, failed: 1 });
    expect(hook.hits).toHaveLength(1);
    expect(dispatcher.counters()).toEqual({ dispatched: {}, failed: { "webhook.post": 1 } });
    expect(JSON.stringify(logged)).toContain("webhook.post");
    expect(JSON.stringify(logged)).not.toContain("s3cr3t");
  });
});
