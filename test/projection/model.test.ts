// Model-based tests of the session-log projection's rules (docs/protocol.md §5.8): fast-check drives a
// reference model (session-model.ts) side by side with a real Host on SQLite and on the memory journal,
// through exec, approve, deny, answer, fork (children and grandchildren, at seqs seen before), suspend,
// resume, a resume cancelled mid-turn, a host lost between an effect and its result, and replay.
// After every command: each recorded call's executor ran at most once per key tree-wide and exactly as
// often as the model says; GetSession's pending approval is the model's own open gate (the one Approve
// accepts); outputs — memory counters included — match the model; the touched chain verifies.
// CI runs MODEL_RUNS (default 100) sequences per journal; `npm run test:model -- --runs 10000` goes deeper.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textMessage, type ApprovalRef } from "../../src/controller/index.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import { sessionView } from "../../src/host/session-proto.js";
import { childMetas } from "../tiers/helpers.js";
import { RealHosts, type JournalKind } from "./real-hosts.js";
import {
  CHOICES,
  EXECUTES,
  MEMORY,
  cloneState,
  complete,
  forkChild,
  gateOutput,
  ownOpenGate,
  ownUnreceiptedGate,
  resumeRefused,
  type HarnessName,
  type Model,
  type MSession,
} from "./session-model.js";

const RUNS = Number(process.env["MODEL_RUNS"] ?? 100);
const SEED = process.env["MODEL_SEED"] !== undefined ? Number(process.env["MODEL_SEED"]) : undefined;
const MAX_COMMANDS = Number(process.env["MODEL_MAX_COMMANDS"] ?? 14);

type Real = RealHosts;
type Cmd = fc.AsyncCommand<Model, Real>;

const never = (): AbortSignal => new AbortController().signal;
const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? String(x) : x));

async function outcome<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; code: string }> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    if (!isHostError(err)) throw err;
    return { ok: false, code: err.code };
  }
}

function pick(m: Model, i: number): MSession {
  return m.sessions[i % m.sessions.length]!;
}

async function head(host: Host, s: MSession): Promise<number> {
  return (await host.journal.head(s.uid)).seq;
}

/** After every command: record the fork point, then the invariants of §5.8. */
async function settle(m: Model, r: Real, touched: MSession): Promise<void> {
  touched.points.push({ seq: await head(r.host, touched), state: cloneState(touched.state) });
  const uids = new Set(m.sessions.map((s) => s.uid));
  // Only this sequence's fork tree: the writes file is shared by every sequence of the run.
  const writes = r.writes().filter((w) => uids.has(w.session));
  const perKey = new Map<string, number>();
  for (const w of writes) perKey.set(w.key, (perKey.get(w.key) ?? 0) + 1);
  for (const [key, n] of perKey) expect(n, `executions of ${key} across the fork tree`).toBe(1);
  expect(writes.length, "demo.write executions").toBe(m.writes);
  for (const s of m.sessions) {
    const shown = (await sessionView(r.host.placer, await r.host.getSession(s.uid))).pendingApproval;
    const own = ownOpenGate(s);
    expect(shown === undefined, `pending approval of ${s.uid} (${s.harness})`).toBe(own === undefined);
    if (shown && own)
      expect({ e: shown.executionId, c: shown.toolCallId, r: Number(shown.requestSeq) }).toEqual({
        e: own.ref.executionId,
        c: own.ref.toolCallId,
        r: own.ref.requestSeq,
      });
  }
  expect(await r.host.journal.verify(touched.uid)).toMatchObject({ ok: true });
}

function park(s: MSession, ref: ApprovalRef | undefined): void {
  expect(ref, `${s.harness} must park`).toBeDefined();
  s.state.pending = { owner: s.uid, gate: { state: "open", ref: ref! }, ranExecutor: false };
}

class Exec implements Cmd {
  constructor(
    readonly i: number,
    readonly text: string,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    const before = await head(r.host, s);
    const res = await outcome(
      r.host.placer.exec({ session: s.uid, inputs: [textMessage("user", this.text)], signal: never() }),
    );
    if (ownUnreceiptedGate(s)) {
      expect(res).toEqual({ ok: false, code: ErrorCode.FailedPrecondition });
      expect(await head(r.host, s)).toBe(before);
    } else {
      if (!res.ok) throw new Error(`exec on ${s.harness} refused: ${res.code}`);
      const turn = res.value;
      s.state.pending = undefined;
      switch (s.harness) {
        case "echo":
          expect(turn.outputs).toEqual([`echo:${this.text}`]);
          s.state.outputs.push(`echo:${this.text}`);
          break;
        case "counter":
          s.state.count += 1;
          expect(turn.outputs).toEqual([String(s.state.count)]);
          s.state.outputs.push(String(s.state.count));
          break;
        case "writer":
          expect(turn.outputs).toEqual(["written"]);
          m.writes += 1;
          s.state.outputs.push("written");
          break;
        case "ask":
        case "askcounter":
        case "asker":
          park(s, turn.parked);
          break;
        default: {
          const x: never = s.harness;
          throw new Error(String(x));
        }
      }
    }
    await settle(m, r, s);
  }
  toString = () => `exec(${this.i}, ${JSON.stringify(this.text)})`;
}

type DecisionKind = "approve" | "deny" | "answer" | "bad-answer";

class Decide implements Cmd {
  constructor(
    readonly i: number,
    readonly kind: DecisionKind,
    readonly choice: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    const shown = (await sessionView(r.host.placer, await r.host.getSession(s.uid))).pendingApproval;
    const gate = s.state.pending?.gate;
    const ref: ApprovalRef | undefined = shown
      ? { executionId: shown.executionId, toolCallId: shown.toolCallId, requestSeq: Number(shown.requestSeq) }
      : gate?.ref;
    if (!ref) return settle(m, r, s);
    const approved = this.kind !== "deny";
    const reason =
      this.kind === "answer" ? CHOICES[this.choice % CHOICES.length]! : this.kind === "bad-answer" ? "green" : "";
    const before = await head(r.host, s);
    const res = await outcome(r.host.placer.approve(s.uid, { ...ref, approved, reason }));
    const own = ownOpenGate(s);
    const ownDecided = ownUnreceiptedGate(s);
    if (own) {
      if (s.harness === "asker" && approved && !(CHOICES as readonly string[]).includes(reason)) {
        expect(res).toEqual({ ok: false, code: ErrorCode.InvalidArgument });
      } else {
        expect(res.ok && !res.value.existing, show(res)).toBe(true);
        own.state = "decided";
        own.approved = approved;
        own.reason = reason;
      }
    } else if (ownDecided && ownDecided.approved === approved && ownDecided.reason === reason) {
      expect(res.ok && res.value.existing, show(res)).toBe(true);
    } else {
      expect(res).toEqual({ ok: false, code: ErrorCode.FailedPrecondition });
    }
    if (!res.ok || res.value.existing) expect(await head(r.host, s)).toBe(before);
    await settle(m, r, s);
  }
  toString = () => `${this.kind}(${this.i}, ${this.choice})`;
}

class Fork implements Cmd {
  constructor(
    readonly i: number,
    readonly point: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    // Memory harnesses fork at the head only (docs/protocol.md §7.3); stateless ones at any seen seq.
    const at = MEMORY.has(s.harness)
      ? { seq: await head(r.host, s), state: cloneState(s.state) }
      : s.points[this.point % Math.max(1, s.points.length)];
    if (at === undefined || at.seq === 0) return settle(m, r, s);
    const [meta] = childMetas(1, s.harness);
    const res = await r.host.placer.fork({
      parent: s.uid,
      atSeq: MEMORY.has(s.harness) ? 0 : at.seq,
      children: [meta!],
      signal: never(),
    });
    expect(res.children.map((c) => c.uid)).toEqual([meta!.uid]);
    const child = forkChild(s, meta!.uid, at);
    m.sessions.push(child);
    await settle(m, r, s);
    await settle(m, r, child);
  }
  toString = () => `fork(${this.i}, ${this.point})`;
}

class Suspend implements Cmd {
  constructor(readonly i: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    await r.host.placer.suspend(s.uid, never());
    await settle(m, r, s);
  }
  toString = () => `suspend(${this.i})`;
}

/** Resume as the model predicts it; `cut` cancels it right after an approved executor ran. */
async function resumeAndCheck(m: Model, r: Real, s: MSession, cut: boolean): Promise<void> {
  const before = await head(r.host, s);
  const p = s.state.pending;
  const cuts = cut && p?.owner === s.uid && p.gate?.state === "decided" && p.gate.approved && EXECUTES.has(s.harness);
  const abort = new AbortController();
  if (cuts) r.tools.cutNext(abort);
  const res = await outcome(r.host.placer.resume(s.uid, abort.signal));
  r.tools.clear();
  if (cuts) {
    expect(res).toEqual({ ok: false, code: ErrorCode.Cancelled });
    if (!p!.ranExecutor) m.writes += 1;
    p!.ranExecutor = true;
    return;
  }
  if (!p) {
    expect(res.ok && res.value.turn === undefined, show(res)).toBe(true);
  } else if (resumeRefused(s)) {
    expect(res).toEqual({ ok: false, code: ErrorCode.FailedPrecondition });
    expect(await head(r.host, s)).toBe(before);
  } else if (p.gate?.state === "open") {
    expect(res.ok && res.value.parked, show(res)).toEqual(p.gate.ref);
    expect(await head(r.host, s)).toBe(before);
  } else if (p.gate) {
    const output = gateOutput(s.harness, p.gate, s.state.count + 1);
    expect(res.ok && res.value.turn?.outputs, show(res)).toEqual([output]);
    complete(m, s, output);
  } else if (p.cut) {
    expect(res.ok && res.value.turn?.outputs, show(res)).toEqual(["written"]);
    complete(m, s, "written");
  } else {
    throw new Error(`the model has an unexpected pending turn ${JSON.stringify(p)}`);
  }
}

class Resume implements Cmd {
  constructor(
    readonly i: number,
    readonly cut: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    await resumeAndCheck(m, r, s, this.cut);
    await settle(m, r, s);
  }
  toString = () => `${this.cut ? "cancelResume" : "resume"}(${this.i})`;
}

class LoseHost implements Cmd {
  constructor(
    readonly i: number,
    readonly text: string,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    const p = s.state.pending;
    if (s.harness === "writer") {
      // The executor runs, the host is lost before TOOL_RESULT.
      const ran = await r.loseDuring((host) =>
        host.placer.exec({ session: s.uid, inputs: [textMessage("user", this.text)], signal: never() }),
      );
      expect(ran).toBe(true);
      m.writes += 1;
      s.state.pending = { owner: s.uid, cut: true, ranExecutor: true };
    } else if (p?.owner === s.uid && p.gate?.state === "decided" && p.gate.approved && EXECUTES.has(s.harness)) {
      const ran = await r.loseDuring((host) => host.placer.resume(s.uid, never()));
      expect(ran).toBe(true);
      if (!p.ranExecutor) m.writes += 1;
      p.ranExecutor = true;
    } else {
      await r.reopen();
    }
    await settle(m, r, s);
  }
  toString = () => `loseHost(${this.i}, ${JSON.stringify(this.text)})`;
}

class Replay implements Cmd {
  constructor(readonly i: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const s = pick(m, this.i);
    if (MEMORY.has(s.harness)) return settle(m, r, s);
    const headBefore = await r.host.journal.head(s.uid);
    const calls = r.model.calls;
    const first = await r.host.placer.replay(s.uid, never());
    const second = await r.host.placer.replay(s.uid, never());
    expect(first.outputs).toEqual(s.state.outputs);
    expect(second.outputs).toEqual(first.outputs);
    expect(r.model.calls, "replay makes no model call").toBe(calls);
    expect(await r.host.journal.head(s.uid)).toEqual(headBefore);
    await settle(m, r, s);
  }
  toString = () => `replay(${this.i})`;
}

const idx = fc.nat({ max: 7 });
const text = fc.constantFrom("a", "b", "c");
const exec = fc.tuple(idx, text).map(([i, t]) => new Exec(i, t));
const decide = fc
  .tuple(idx, fc.constantFrom<DecisionKind>("approve", "approve", "deny", "answer", "bad-answer"), fc.nat({ max: 1 }))
  .map(([i, k, c]) => new Decide(i, k, c));
const fork = fc.tuple(idx, fc.nat({ max: 30 })).map(([i, p]) => new Fork(i, p));
const resume = fc.tuple(idx, fc.boolean()).map(([i, cut]) => new Resume(i, cut));
/** The commands, weighted toward the ones whose interleavings matter (fork, decide, resume). */
const commands = fc.commands(
  [
    exec,
    exec,
    decide,
    decide,
    fork,
    fork,
    resume,
    resume,
    idx.map((i) => new Suspend(i)),
    fc.tuple(idx, text).map(([i, t]) => new LoseHost(i, t)),
    idx.map((i) => new Replay(i)),
  ],
  { maxCommands: MAX_COMMANDS },
);

/** Root sessions of a run: stateless harnesses mostly; a memory harness in about one run in five. */
const roots = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.subarray<HarnessName>(["echo", "writer", "ask", "asker"], { minLength: 1, maxLength: 3 }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom<HarnessName>("counter", "askcounter"), fc.constantFrom<HarnessName>("ask", "writer"))
      .map((t) => [...t]),
  },
);

describe.each<JournalKind>(["sqlite", "memory"])("model-based: the projection's rules on a %s journal", (kind) => {
  let real: RealHosts;
  beforeAll(async () => {
    real = await new RealHosts(kind).open();
  });
  afterAll(async () => {
    await real.close();
  });

  it(`${RUNS} seeded command sequences agree with the reference model`, { timeout: 0 }, async () => {
    await fc.assert(
      fc.asyncProperty(roots, commands, async (harnesses, cmds) => {
        const sessions: MSession[] = [];
        for (const harness of harnesses) {
          const info = await real.host.createSession({ harness });
          sessions.push({ uid: info.uid, harness, state: { count: 0, outputs: [] }, points: [] });
        }
        await fc.asyncModelRun(() => ({ model: { sessions, writes: 0 }, real }), cmds);
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), verbose: 1 },
    );
  });
});
