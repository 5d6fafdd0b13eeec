// The lean session log (SessionLog.lean(), what the record cache keeps) against the full fold. Invariant
// (issue 15's correctness core): after every record of any log, valid or not, every query placement asks
// of a projection answers identically on both — pending turn and trailing effect, awaited call, gates,
// last END, restart points, history base, pin, compute state, execution status, completedAfter — while
// the lean log keeps no completed turn's inputs or effects and refuses to list executions.
import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ev, SessionLog, textMessage } from "../../src/controller/index.js";
import { compactionMessage } from "../../src/projection/compaction.js";
import { hostEvent } from "../../src/controller/events.js";
import { EXECUTION_OVERHEAD_BYTES, MARK_OVERHEAD_BYTES } from "../../src/projection/log-tables.js";
import type { Gate, PendingTurn } from "../../src/projection/session-log.js";
import { upgradeEvent } from "../../src/controller/upgrade-record.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import {
  EventKind,
  Lifecycle_Kind,
  Mediation,
  ModelCallSchema,
  ToolCallSchema,
  ToolResultSchema,
  UsageSchema,
  type Event,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { decodeProjection, encodeProjection, ProjectionUnreadable } from "../../src/projection/codec.js";
import type { JournalRecord } from "../../src/journal/types.js";
import { created } from "../journal/sessions.js";

const RUNS = Number(process.env["LEAN_LOG_RUNS"] ?? 150);

type Op =
  | { t: "start"; inputs: number; short: boolean }
  | { t: "input" | "model" | "output" | "usage" | "end" | "error" | "request" | "result" | "late" | "stray" }
  | { t: "tool"; gated: boolean }
  | { t: "decide"; approved: boolean; wrongSeq: boolean }
  | { t: "compaction"; back: number }
  | { t: "fork" | "resume" | "cancel" }
  | { t: "suspend"; memory: boolean }
  | { t: "upgrade"; to: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("start" as const), inputs: fc.nat(2), short: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(...(["input", "model", "output", "usage", "end", "end"] as const)).map((t) => ({ t })),
  },
  { weight: 1, arbitrary: fc.constantFrom(...(["error", "request", "result", "late"] as const)).map((t) => ({ t })) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("tool" as const), gated: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("decide" as const), approved: fc.boolean(), wrongSeq: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("compaction" as const), back: fc.nat(6) }) },
  { weight: 1, arbitrary: fc.constantFrom(...(["fork", "resume", "cancel"] as const)).map((t) => ({ t })) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("suspend" as const), memory: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("upgrade" as const), to: fc.constantFrom("1", "2", "3") }) },
);

interface Exec {
  id: string;
  startSeq: number;
  ended: boolean;
  inputs: number;
  calls: { id: string; seq: number; gated: boolean }[];
  requests: { callId: string; seq: number }[];
}

/** Turns ops into the events of a log: mostly well-formed, with superseded turns, late and stray events. */
function eventsOf(ops: readonly Op[]): Event[] {
  const events: Event[] = [];
  const execs: Exec[] = [];
  let n = 0;
  const cur = (): Exec | undefined => {
    const e = execs.at(-1);
    return e && !e.ended ? e : undefined;
  };
  const push = (e: Event): number => {
    events.push(e);
    return events.length;
  };
  for (const op of ops) {
    const e = cur();
    switch (op.t) {
      case "start": {
        const id = `e${++n}`;
        const seq = push(
          ev.executionStart(id, {
            inputCount: op.inputs + (op.short ? 1 : 0),
            harness: "h",
            harnessVersion: n % 3 === 0 ? "1@sha256:abc" : "1",
            config: new Uint8Array(),
            resumeFromSeq: 0,
          }),
        );
        execs.push({ id, startSeq: seq, ended: false, inputs: 0, calls: [], requests: [] });
        for (let i = 0; i < op.inputs; i++) push(ev.input(id, textMessage("user", `in ${i}`)));
        execs.at(-1)!.inputs = op.inputs;
        break;
      }
      case "input":
        if (e) push(ev.input(e.id, textMessage("user", "more")));
        break;
      case "model":
        if (e) push(ev.modelCall(e.id, create(ModelCallSchema, { model: "m" })));
        break;
      case "output":
        if (e) push(ev.output(e.id, textMessage("assistant", "out")));
        break;
      case "usage":
        if (e) push(ev.usage(e.id, create(UsageSchema, {})));
        break;
      case "end":
        if (e) {
          push(ev.end(e.id));
          e.ended = true;
        }
        break;
      case "error":
        if (e) push(ev.error(e.id, 1, "cancelled"));
        break;
      case "tool":
        if (e) {
          const id = `c${++n}`;
          const mediation = op.gated ? Mediation.REQUIRES_APPROVAL : Mediation.UNSPECIFIED;
          const seq = push(ev.toolCall(e.id, create(ToolCallSchema, { id, tool: "t", mediation, idempotencyKey: id })));
          e.calls.push({ id, seq, gated: op.gated });
        }
        break;
      case "request": {
        const call = e?.calls.filter((c) => c.gated).at(-1);
        if (e && call) e.requests.push({ callId: call.id, seq: push(ev.approvalRequest(e.id, call.id, "ok?")) });
        break;
      }
      case "decide": {
        const req = e?.requests.at(-1);
        if (e && req)
          push(
            hostEvent(EventKind.EVENT_APPROVAL_RESULT, e.id, {
              case: "approvalResult",
              value: {
                toolCallId: req.callId,
                approved: op.approved,
                reason: "r",
                requestSeq: BigInt(req.seq + (op.wrongSeq ? 1 : 0)),
              },
            }),
          );
        break;
      }
      case "result": {
        const call = e?.calls.at(-1);
        if (e && call) push(ev.toolResult(e.id, create(ToolResultSchema, { id: call.id })));
        break;
      }
      case "compaction":
        if (e && e.startSeq > 1) {
          const through = Math.max(1, e.startSeq - 1 - op.back);
          const message = compactionMessage({
            summary: "s",
            fromSeq: 1,
            throughSeq: through,
            inputHash: "",
            model: "m",
          });
          push(ev.output(e.id, message));
        }
        break;
      case "late": {
        // An event of a superseded, never-ended turn: the grammar accepts it.
        const old = execs.slice(0, -1).findLast((x) => !x.ended);
        if (old) push(ev.output(old.id, textMessage("assistant", "late")));
        break;
      }
      case "stray":
        push(ev.output("nobody", textMessage("assistant", "x")));
        break;
      case "fork":
        push(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_FORK));
        break;
      case "resume":
        push(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME));
        break;
      case "cancel":
        push(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_CANCEL));
        break;
      case "suspend":
        push(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { snapshotLocal: "x", snapshotMemory: op.memory }));
        break;
      case "upgrade":
        push(upgradeEvent({ harness: "h", from: "1", to: op.to }));
        break;
      default: {
        const exhaustive: never = op;
        throw new Error(`unknown op ${String(exhaustive)}`);
      }
    }
  }
  return events;
}

async function recordsOf(events: readonly Event[]): Promise<JournalRecord[]> {
  if (events.length === 0) return [];
  return (await created(new MemoryJournal(), "s")).appendBatch("s", 0, 0, [...events]);
}

/** A query's answer, or the message it threw. */
function answer<T>(q: () => T): T | { throws: string } {
  try {
    return q();
  } catch (err) {
    return { throws: err instanceof Error ? err.message : String(err) };
  }
}

function gateView(g: Gate | undefined) {
  if (!g) return undefined;
  return {
    ref: g.ref,
    callId: g.call.id,
    callSeq: g.callSeq,
    state: g.state,
    owner: g.owner,
    decision: g.decision && { seq: g.decision.record.seq, approved: g.decision.approved, reason: g.decision.reason },
    receiptSeq: g.receiptSeq,
  };
}

function pendingView(p: PendingTurn | undefined) {
  if (!p) return undefined;
  const x = p.execution;
  const t = p.trailing;
  return {
    owner: p.owner,
    trailing:
      t.kind === "gate"
        ? { kind: t.kind, gate: gateView(t.gate) }
        : t.kind === "tool"
          ? { kind: t.kind, seq: t.seq, call: t.call.id, owner: t.owner }
          : t.kind === "model"
            ? { kind: t.kind, seq: t.seq, owner: t.owner }
            : { kind: t.kind },
    execution: {
      id: x.executionId,
      startIndex: x.startIndex,
      startSeq: x.startSeq,
      harness: x.harness,
      harnessVersion: x.harnessVersion,
      harnessDigest: x.harnessDigest,
      resumeFromSeq: x.resumeFromSeq,
      inputCount: x.inputCount,
      inputs: x.inputs.length,
      effects: x.effects.map((e) => e.seq),
      completed: x.completed,
      lastSeq: x.lastSeq,
      error: x.error,
    },
  };
}

/** Every answer placement (and the views) reads from a projection, over every seq and id of the log. */
function answers(log: SessionLog, records: readonly JournalRecord[], ids: readonly string[]) {
  const head = log.head.seq;
  const seqs = Array.from({ length: head + 2 }, (_, i) => i);
  const gateRefs = records.flatMap((r) =>
    r.event.body.case === "approval"
      ? [{ executionId: r.event.executionId, toolCallId: r.event.body.value.toolCallId, requestSeq: r.seq }]
      : [],
  );
  const checkpoints = records.flatMap((r) => [
    { seq: r.seq, contentHash: r.contentHash },
    { seq: r.seq, contentHash: "0".repeat(64) },
  ]);
  return {
    head: log.head,
    length: log.length,
    ownForkSeq: log.ownForkSeq,
    computeState: log.computeState,
    hasTurns: log.hasTurns,
    lastEndSeq: log.lastEndSeq,
    lastCompaction: log.lastCompaction,
    pinnedVersion: log.pinnedVersion,
    upgrades: log.upgrades,
    lastOwnSuspend: log.lastOwnSuspend,
    parked: answer(() => log.parked),
    pending: answer(() => pendingView(log.pending())),
    certified: answer(() => {
      const p = log.pending();
      return p && log.certifiedVersion(p.execution);
    }),
    awaitedCall: answer(() => log.awaitedCall()?.id),
    ownUnreceiptedGate: answer(() => gateView(log.ownUnreceiptedGate())),
    pendingApproval: answer(() => gateView(log.pendingApproval())),
    gates: gateRefs.map((ref) => [
      answer(() => gateView(log.gate(ref))),
      answer(() => gateView(log.gate({ ...ref, requestSeq: ref.requestSeq + 1 }))),
    ]),
    historyBase: seqs.map((s) => log.historyBase(s)),
    completedAfter: seqs.map((s) => log.completedAfter(s)),
    executions: [...ids, "unknown"].map((id) => answer(() => log.execution(id))),
    restart: [...ids, "unknown"].flatMap((id) => [
      answer(() => log.restartPoint(id, undefined)),
      ...checkpoints.map((c) => answer(() => log.restartPoint(id, c))),
    ]),
  };
}

const idsOf = (records: readonly JournalRecord[]) => [
  ...new Set(records.map((r) => r.event.executionId).filter((id) => id !== "")),
];

/** Ops of a log; one in five breaks the grammar once (a stray event), somewhere. */
const logArb: fc.Arbitrary<Op[]> = fc
  .record({
    ops: fc.array(opArb, { minLength: 1, maxLength: 40 }),
    stray: fc.option(fc.nat(40), { freq: 4 }),
  })
  .map(({ ops, stray }) =>
    stray === null ? ops : [...ops.slice(0, stray), { t: "stray" as const }, ...ops.slice(stray)],
  );

describe("SessionLog.lean", () => {
  it("aLeanLogAnswersEveryPlacementQueryExactlyAsTheFullFoldAfterEveryRecord", async () => {
    await fc.assert(
      fc.asyncProperty(logArb, async (ops) => {
        const records = await recordsOf(eventsOf(ops));
        const ids = idsOf(records);
        const full = new SessionLog();
        const lean = SessionLog.lean();
        for (let i = 0; i < records.length; i++) {
          full.apply(records[i]!);
          lean.apply(records[i]!);
          const seen = records.slice(0, i + 1);
          expect(answers(lean, seen, ids)).toEqual(answers(full, seen, ids));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("executionStatusAndCompletedAfterAgreeWithTheFullLogsListOfExecutions", async () => {
    await fc.assert(
      fc.asyncProperty(logArb, async (ops) => {
        const records = await recordsOf(eventsOf(ops));
        const full = SessionLog.of(records);
        const all = answer(() => full.allExecutions());
        if ("throws" in all) return;
        all.forEach((x, i) => {
          expect(full.execution(x.executionId)).toEqual({
            executionId: x.executionId,
            startSeq: x.startSeq,
            lastSeq: x.lastSeq,
            completed: x.completed,
            current: i === all.length - 1,
          });
        });
        expect(full.hasTurns).toBe(all.length > 0);
        for (let s = 0; s <= records.length + 1; s++)
          expect(full.completedAfter(s)).toBe(all.filter((x) => x.startSeq > s && x.completed).length);
      }),
      { numRuns: RUNS },
    );
  });

  it("aLeanLogRefusesToListExecutionsWithAnInternalError", async () => {
    const records = await recordsOf(eventsOf([{ t: "start", inputs: 1, short: false }, { t: "end" }]));
    const lean = SessionLog.lean();
    for (const r of records) lean.apply(r);
    expect(lean.isLean).toBe(true);
    let thrown: unknown;
    try {
      lean.allExecutions();
    } catch (err) {
      thrown = err;
    }
    expect(isHostError(thrown, ErrorCode.Internal)).toBe(true);
    expect(SessionLog.of(records).allExecutions()).toHaveLength(1);
  });

  it("aLeanLogRetainsOnlyConstantsPerCompletedTurnAndThePendingTurnsEvents", async () => {
    const ops: Op[] = [];
    for (let i = 0; i < 300; i++) ops.push({ t: "start", inputs: 1, short: false }, { t: "output" }, { t: "end" });
    const records = await recordsOf(eventsOf(ops));
    const lean = SessionLog.lean();
    for (const r of records) lean.apply(r);
    // Between turns: nothing but the per-execution and per-mark constants (one END mark per turn).
    expect(lean.retainedBytes).toBe(300 * (EXECUTION_OVERHEAD_BYTES + MARK_OVERHEAD_BYTES));
    const pending = await recordsOf(eventsOf([...ops, { t: "start", inputs: 1, short: false }, { t: "output" }]));
    for (const r of pending.slice(records.length)) lean.apply(r);
    // The pending turn's INPUT and OUTPUT are kept (resume serves them), counted at their encoded size.
    const p = lean.pending();
    expect(p?.execution.inputs).toHaveLength(1);
    expect(p?.execution.effects).toHaveLength(1);
    expect(lean.retainedBytes).toBeGreaterThan(301 * EXECUTION_OVERHEAD_BYTES + 300 * MARK_OVERHEAD_BYTES);
  });
});

describe("the stored form of a lean log (docs/protocol.md §5.9)", () => {
  it("aDecodedProjectionAnswersEveryQueryAsTheFoldAndFoldsOnFromTheSameHead", async () => {
    await fc.assert(
      fc.asyncProperty(logArb, fc.nat(60), async (ops, cutAt) => {
        const records = await recordsOf(eventsOf(ops));
        const ids = idsOf(records);
        const cut = records.length === 0 ? 0 : cutAt % (records.length + 1);
        const lean = SessionLog.lean();
        for (const r of records.slice(0, cut)) lean.apply(r);
        const bytes = encodeProjection(lean);
        const pending = answer(() => lean.pending());
        const broken = pending !== undefined && "throws" in pending;
        // A log that broke the execution grammar has no stored form (the host folds it from the records).
        expect(bytes === undefined).toBe(broken);
        if (!bytes) return;
        const decoded = decodeProjection(bytes);
        const full = new SessionLog();
        for (const r of records.slice(0, cut)) full.apply(r);
        expect(answers(decoded, records.slice(0, cut), ids)).toEqual(answers(full, records.slice(0, cut), ids));
        expect(decoded.retainedBytes).toBe(lean.retainedBytes);
        for (let i = cut; i < records.length; i++) {
          decoded.apply(records[i]!);
          full.apply(records[i]!);
          expect(answers(decoded, records.slice(0, i + 1), ids)).toEqual(answers(full, records.slice(0, i + 1), ids));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("aDamagedStoredProjectionIsRefusedNotHalfBuilt", async () => {
    const records = await recordsOf(eventsOf([{ t: "start", inputs: 1, short: false }, { t: "end" }]));
    const lean = SessionLog.lean();
    for (const r of records) lean.apply(r);
    const bytes = encodeProjection(lean)!;
    const headLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
    const header = new TextDecoder().decode(bytes.subarray(4, 4 + headLength));
    /** The bytes with the header rewritten by `edit` (its length field kept right). */
    const withHeader = (edit: (h: string) => string): Uint8Array => {
      const h = new TextEncoder().encode(edit(header));
      const out = new Uint8Array(4 + h.length + bytes.length - 4 - headLength);
      new DataView(out.buffer).setUint32(0, h.length, true);
      out.set(h, 4);
      out.set(bytes.subarray(4 + headLength), 4 + h.length);
      return out;
    };
    expect(decodeProjection(withHeader((h) => h)).head).toEqual(lean.head);
    const damaged = [
      bytes.slice(0, bytes.length - 3),
      bytes.slice(0, 2),
      withHeader((h) => h.replace('"harnesshost.projection.v2"', '"harnesshost.projection.v0"')),
      withHeader((h) => h.replace(/"starts":(\d+)/, (_, n) => `"starts":${Number(n) + 8}`)),
      withHeader((h) => h.replace(/"order":"(LE|BE)"/, (_, o) => `"order":"${o === "LE" ? "BE" : "LE"}"`)),
      withHeader((h) => h.slice(0, -1)),
    ];
    for (const d of damaged) expect(() => decodeProjection(d)).toThrow(ProjectionUnreadable);
  });
});
