// /metrics after a scripted workload against a real `serve` (issue 19, metrics): every count the
// workload implies is what the scrape says, every family the docs list is declared, no sample carries a
// session id, and the endpoint refuses other paths and methods.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { ServeProcess } from "../reliability/serve-process.js";
import { familiesOf, METRIC_FAMILIES, parseExposition, sampleValue, type Sample } from "./scrape.js";

const dir = mkdtempSync(join(tmpdir(), "hh-obs-metrics-"));
let serve: ServeProcess;
let metricsAddr = "";
let text = "";
let samples: Sample[] = [];
const sessions: string[] = [];

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main([...args, "--server", serve.addr], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function newSession(harness: string, input: string): Promise<string> {
  const r = await cli("exec", "--harness", harness, "--input", input, "--json");
  expect(r.code, r.err).toBe(harness === "ask" ? 8 : 0); // 8: the turn parked (docs/cli.md)
  const uid = (JSON.parse(r.out) as { session: string }).session;
  sessions.push(uid);
  return uid;
}

async function ok(...args: string[]): Promise<void> {
  const r = await cli(...args);
  expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(0);
}

beforeAll(async () => {
  let stderr = "";
  serve = await ServeProcess.start({
    args: ["--data", join(dir, "data"), "--addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"].concat([
      "--metrics-addr",
      "127.0.0.1:0",
      "--log-format",
      "json",
    ]),
    onStderr: (c) => {
      stderr += c;
    },
  });
  metricsAddr = /metrics=(\S+)/.exec(stderr)?.[1] ?? "";
  expect(metricsAddr, stderr).not.toBe("");

  // The scripted workload.
  const echo = await newSession("echo", "one"); // turn 1 (stateless, 1 model call)
  await ok("exec", "--session", echo, "--input", "two"); // turn 2
  const counter = await newSession("counter", "x"); // memory turn 1, checkpoint 1
  await ok("exec", "--session", counter, "--input", "y"); // memory turn 2, checkpoint 2
  await ok("suspend", "--session", counter); // suspend 1 (the head checkpoint's blob)
  await ok("resume", "--session", counter); // resume 1 (restores: reads the blob)
  await ok("fork", "--session", echo); // fork 1
  const ask = await newSession("ask", "write me"); // parks on an approval
  await ok("approve", "--session", ask); // decision: approved
  await ok("resume", "--session", ask); // resume 2, re-drives the turn: the tool runs
  expect((await cli("get", "--session", "sess-does-not-exist")).code).toBe(3); // NOT_FOUND

  const res = await fetch(`http://${metricsAddr}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  text = await res.text();
  samples = parseExposition(text);
}, 180_000);

afterAll(async () => {
  await serve?.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe("/metrics after a scripted workload", () => {
  it("metricsScrapeCountsTheScriptedWorkload", () => {
    const v = (name: string, labels: Record<string, string> = {}) => sampleValue(samples, name, labels);
    // Turns: 2 echo + 2 counter + ask's parked exec and its re-drive.
    expect(v("harnesshost_turns_started_total", { harness: "echo", tier: "stateless" })).toBe(2);
    expect(v("harnesshost_turns_started_total", { harness: "counter", tier: "memory" })).toBe(2);
    expect(v("harnesshost_turns_finished_total", { harness: "echo", outcome: "completed" })).toBe(2);
    expect(v("harnesshost_turns_finished_total", { harness: "counter", outcome: "completed" })).toBe(2);
    expect(v("harnesshost_turns_finished_total", { harness: "ask", outcome: "parked" })).toBe(1);
    expect(v("harnesshost_turns_finished_total", { harness: "ask", outcome: "completed" })).toBe(1);
    expect(v("harnesshost_turn_duration_seconds_count", { harness: "echo" })).toBe(2);
    // Model calls: one per echo turn, by the model the harness asked for.
    expect(v("harnesshost_model_calls_total", { model: "echo", outcome: "ok" })).toBe(2);
    expect(v("harnesshost_model_call_duration_seconds_count", { model: "echo" })).toBe(2);
    // The gated demo.write ran once, after its approval; the wait is decided and no longer pending.
    expect(v("harnesshost_tool_calls_total", { tool: "demo.write", outcome: "ok" })).toBe(1);
    expect(v("harnesshost_wait_duration_seconds_count", { kind: "approval", decision: "approved" })).toBe(1);
    expect(v("harnesshost_waits_pending", { kind: "approval" })).toBe(0);
    // Checkpoints after each counter turn; blobs written, and read back by the resume's restore.
    expect(v("harnesshost_checkpoints_total", { harness: "counter", outcome: "ok" })).toBe(2);
    expect(v("harnesshost_snapshot_bytes_total", { direction: "written" })).toBeGreaterThan(0);
    expect(v("harnesshost_snapshot_bytes_total", { direction: "read" })).toBeGreaterThan(0);
    // Session operations.
    expect(v("harnesshost_session_operation_duration_seconds_count", { operation: "suspend", outcome: "ok" })).toBe(1);
    expect(v("harnesshost_session_operation_duration_seconds_count", { operation: "resume", outcome: "ok" })).toBe(2);
    expect(v("harnesshost_session_operation_duration_seconds_count", { operation: "fork", outcome: "ok" })).toBe(1);
    expect(v("harnesshost_session_operation_duration_seconds_count", { operation: "approve", outcome: "ok" })).toBe(1);
    // The journal: every record of every session went through a timed commit.
    expect(v("harnesshost_journal_records_appended_total", { backend: "sqlite" })).toBeGreaterThan(20);
    expect(v("harnesshost_journal_appended_bytes_total", { backend: "sqlite" })).toBeGreaterThan(0);
    expect(v("harnesshost_journal_commit_duration_seconds_count", { backend: "sqlite" })).toBeGreaterThan(5);
    // Sessions by compute state: the three made by exec and the fork child.
    expect(v("harnesshost_sessions")).toBe(sessions.length + 1);
    // The counter's node process is up (its idle timer keeps it a while) or was counted down on exit.
    expect(v("harnesshost_harness_nodes", { harness: "counter" })).toBeGreaterThanOrEqual(0);
    // RPCs by method and code.
    expect(v("harnesshost_rpcs_total", { method: "/agentsessions.v1.Sessions/Exec", code: "OK" })).toBe(5);
    expect(v("harnesshost_rpcs_total", { method: "/agentsessions.v1.Sessions/GetSession", code: "NOT_FOUND" })).toBe(1);
    expect(v("harnesshost_rpcs_total", { method: "/agentsessions.v1.Sessions/Fork", code: "OK" })).toBe(1);
  });

  it("everyDocumentedFamilyIsDeclared", () => {
    const declared = familiesOf(text);
    for (const f of METRIC_FAMILIES) expect(declared, f).toContain(f);
  });

  it("noSampleCarriesASessionId", () => {
    for (const uid of sessions) expect(text).not.toContain(uid);
    for (const s of samples) for (const value of Object.values(s.labels)) expect(value).not.toMatch(/^sess-/);
  });

  it("metricsEndpointRefusesOtherPathsAndMethods", async () => {
    expect((await fetch(`http://${metricsAddr}/`)).status).toBe(404);
    expect((await fetch(`http://${metricsAddr}/metrics`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`http://${metricsAddr}/metrics?x=1`, { method: "HEAD" })).status).toBe(200);
  });
});
