// Shared drivers for the snapshot-tier end-to-end tests: a real Host on a temp data dir, one-line turn
// helpers, error-code assertions and deadline polls. Invariant: every Host and temp dir a test opens
// through `openTestHost` is closed and removed by `closeAll` (called from afterAll/afterEach).
import { CountingModel as SuiteCountingModel } from "../../src/conformance/counting-model.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { Lifecycle_Kind, Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { newSessionUid, textMessage } from "../../src/controller/index.js";
import { isHostError, type ErrorCode } from "../../src/errors/index.js";
import { Host, type HostOverrides } from "../../src/host/host.js";
import type { HostConfigInput } from "../../src/host/config.js";
import type { JournalRecord, SessionMetaInput } from "../../src/journal/types.js";
import { echoModel } from "../../src/model/echo.js";
import { SpawnedRuntime } from "../../src/runtime/spawned.js";

const opened: { host: Host; dir: string }[] = [];

/** Opens a Host on a fresh temp data dir (unless the config names one). */
export async function openTestHost(config: HostConfigInput = {}, overrides: HostOverrides = {}): Promise<Host> {
  const dir = config.dataDir ?? mkdtempSync(join(tmpdir(), "hh-tiers-"));
  const host = await Host.open({ ...config, dataDir: dir }, overrides);
  opened.push({ host, dir });
  return host;
}

/** Closes every Host opened through openTestHost and removes its data dir. */
export async function closeAll(): Promise<void> {
  for (const { host, dir } of opened.splice(0)) {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function signal(): AbortSignal {
  return new AbortController().signal;
}

/** One turn with one text input; resolves to the turn's outputs. */
export async function turn(host: Host, session: string, text = "go"): Promise<readonly string[]> {
  const result = await host.placer.exec({ session, inputs: [textMessage("user", text)], signal: signal() });
  return result.outputs;
}

/** Runs `n` turns and returns the last output of each. */
export async function turns(host: Host, session: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((await turn(host, session)).at(-1) ?? "");
  return out;
}

/** Awaits a rejection and checks its HostError code; returns the error for message checks. */
export async function rejectsWithCode(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a rejection with code ${code}`).toBeDefined();
  if (!isHostError(caught)) throw caught;
  expect(caught.code, caught.message).toBe(code);
  return caught;
}

export async function headSeq(host: Host, session: string): Promise<number> {
  return (await host.journal.head(session)).seq;
}

export async function records(host: Host, session: string): Promise<JournalRecord[]> {
  return host.journal.readRange(session);
}

export async function expectChainVerifies(host: Host, session: string): Promise<void> {
  const result = await host.journal.verify(session);
  expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
}

/** The lifecycle payload of a record, or undefined when it is not a lifecycle event of that kind. */
export function lifecycleOf(record: JournalRecord | undefined, kind: Lifecycle_Kind) {
  const body = record?.event.body;
  if (body?.case !== "lifecycle" || body.value.kind !== kind) return undefined;
  return body.value;
}

export function isLifecycle(event: Event, kind: Lifecycle_Kind): boolean {
  return event.body.case === "lifecycle" && event.body.value.kind === kind;
}

/** Child metadata for Placer.fork. */
export function childMetas(n: number, harness: string): SessionMetaInput[] {
  return Array.from({ length: n }, () => ({ uid: newSessionUid(), project: "default", harness }));
}

/** The spawned runtime a harness entry is placed on. */
export function spawnedRuntimeOf(host: Host, harness: string): SpawnedRuntime {
  const runtime = host.registry.resolve(harness).runtime;
  if (!(runtime instanceof SpawnedRuntime)) throw new Error(`harness ${harness} is not on the spawned runtime`);
  return runtime;
}

export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if (err instanceof Error && "code" in err && err.code === "ESRCH") return false;
    throw err;
  }
}

/** Polls `check` until it returns true or the deadline passes (then fails with `what`). */
export async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The echo model, counting its invocations (the conformance suite's counting wrapper). */
export class CountingModel extends SuiteCountingModel {
  constructor() {
    super(echoModel);
  }
}

/** Absolute path of a fixture harness module. */
export function fixturePath(file: string): string {
  return new URL(`../fixtures/harnesses/${file}`, import.meta.url).pathname;
}
