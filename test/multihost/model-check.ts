// The checker of the multi-host model test (test/multihost/model.test.ts): what the recorded history
// and the journals must show once a sequence ran. Invariants checked: every record a client was
// answered with is still there with its hash; every chain verifies and fences never go backwards; at
// most one decision per gate and one receipt per tool call; each demo.write effect happened at most
// once per (session, idempotency key) across every host's executor file; a counter (memory tier)
// answered exactly the number of turns its journal completed up to that answer (no turn's change
// applied twice or lost); a deleted session is gone; an answered Cancel left nothing running and no own
// wait pending; and no session stays locked beyond the documented lease and handover bounds.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { join } from "node:path";
import { readDemoWrites } from "../../harnesses/ask/demo-write.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecState, type Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Journal } from "../../src/journal/types.js";
import { SESSION_HANDOVER_MS, SESSION_LEASE_MS } from "../../src/journal/postgres/connect.js";
import { CANCEL_WAIT_MS } from "../../src/placement/placer.js";
import { type Cluster, eventually, grpcCodeOf } from "./cluster.js";

/**
 * How long a session may stay locked once every host is up (ms): the final check's Cancel must have
 * started an attempt that succeeds by then (an attempt already under way at the deadline may finish).
 * Each term is a documented bound, at its default (the cluster sets none but leases off):
 * - CANCEL_WAIT_MS (src/placement/placement-state.ts, docs/protocol.md §17): an operation that holds
 *   the session (on any host) is waited for at most this long; past it Cancel answers ABORTED and the
 *   check tries again.
 * - SESSION_LEASE_MS (sessionLeaseMs, docs/scaling.md): a lease outlives its holder's last operation by
 *   at most this long, even when the holder never hears the ask (its listening connection died).
 * - SESSION_HANDOVER_MS (sessionHandoverMs, docs/scaling.md): an asked holder hands the session over
 *   within this; the attempt that asked waits at most this long before it is refused.
 * The worst case is those one after the other: an operation that outlasts one Cancel, then its lease
 * kept by a host that does not hear the ask, then a handover.
 */
export const LOCK_BOUND_MS = CANCEL_WAIT_MS + SESSION_LEASE_MS + SESSION_HANDOVER_MS;

/** What the test knows of one session. */
export interface Known {
  readonly uid: string;
  readonly harness: string;
  deleted: boolean;
  /** The last answer about it showed a pending gate (the model's guide to which operation fits). */
  waiting: boolean;
  /** seq → content hash of every record a client was answered with. */
  readonly acked: Map<number, string>;
}

/** A counter's answer to an Exec: the count it reported and the turn's last seq. */
export interface CounterAnswer {
  readonly uid: string;
  readonly lastSeq: number;
  readonly output: string;
}

export interface History {
  readonly sessions: Known[];
  readonly findings: string[];
  readonly tally: Map<string, number>;
  readonly counters: CounterAnswer[];
}

export function newHistory(): History {
  return { sessions: [], findings: [], tally: new Map(), counters: [] };
}

export function note(h: History, what: string): void {
  h.tally.set(what, (h.tally.get(what) ?? 0) + 1);
}

/** §17.1: a Cancel answered OK left nothing running and no own wait pending. */
export function cancelWasTrue(h: History, label: string, s: Session): void {
  if (s.execState === ExecState.EXEC_RUNNING) h.findings.push(`${label}: Cancel answered OK but the turn still runs`);
  const gate = s.pendingApproval;
  if (gate && gate.requestSeq > s.forkSeq)
    h.findings.push(`${label}: Cancel answered OK but its own wait (request seq ${gate.requestSeq}) is still pending`);
}

/** The journal once the sequence ran (every host up). */
export async function checkJournal(journal: Journal, h: History): Promise<void> {
  for (const k of h.sessions) {
    const info = await journal.getSession(k.uid);
    if (k.deleted) {
      if (info)
        h.findings.push(
          `deleted ${k.uid} is still in the journal: harness "${info.harness}", last seq ${info.lastSeq}, fence ${info.fence}, ${(await journal.readRange(k.uid)).length} records`,
        );
      continue;
    }
    if (!info) {
      h.findings.push(`${k.uid} vanished from the journal without a Delete`);
      continue;
    }
    const verdict = await journal.verify(k.uid);
    if (!verdict.ok) h.findings.push(`${k.uid} does not verify: ${JSON.stringify(verdict)}`);
    const records = await journal.readRange(k.uid);
    const bySeq = new Map(records.map((r) => [r.seq, r.contentHash]));
    for (const [seq, hash] of k.acked)
      if (bySeq.get(seq) !== hash) h.findings.push(`${k.uid}: acknowledged seq ${seq} is lost or changed`);
    const own = records.filter((r) => r.seq > info.forkSeq);
    for (let i = 1; i < own.length; i++)
      if (own[i]!.fence < own[i - 1]!.fence) h.findings.push(`${k.uid}: fence goes backwards at seq ${own[i]!.seq}`);
    const decisions = new Map<string, number>();
    const receipts = new Map<string, number>();
    for (const r of own) {
      const body = r.event.body;
      if (body.case === "approvalResult") {
        const key = String(body.value.requestSeq);
        decisions.set(key, (decisions.get(key) ?? 0) + 1);
      }
      if (r.event.kind === EventKind.EVENT_TOOL_RESULT && body.case === "result") {
        const key = `${r.event.executionId}/${body.value.id}`;
        receipts.set(key, (receipts.get(key) ?? 0) + 1);
      }
    }
    for (const [gate, n] of decisions) if (n > 1) h.findings.push(`${k.uid}: gate ${gate} decided ${n} times`);
    for (const [call, n] of receipts) if (n > 1) h.findings.push(`${k.uid}: tool call ${call} receipted ${n} times`);
  }
  await checkCounters(journal, h);
}

/** A counter answered exactly the turns its journal completed up to (and with) that answer. */
async function checkCounters(journal: Journal, h: History): Promise<void> {
  for (const c of h.counters) {
    if (h.sessions.find((k) => k.uid === c.uid)?.deleted) continue;
    const ends = (await journal.readRange(c.uid)).filter(
      (r) => r.seq <= c.lastSeq && r.event.kind === EventKind.EVENT_END,
    ).length;
    if (c.output !== String(ends))
      h.findings.push(`counter ${c.uid} answered ${c.output} at seq ${c.lastSeq}, its journal completed ${ends} turns`);
  }
}

/** Each demo.write effect at most once per (session, idempotency key), counted over every host's file. */
export function checkEffects(dataDirs: readonly string[], h: History): void {
  const count = new Map<string, number>();
  for (const dir of dataDirs)
    for (const w of readDemoWrites(join(dir, "demo-writes.jsonl"))) {
      const key = `${w.session}/${w.key}`;
      count.set(key, (count.get(key) ?? 0) + 1);
    }
  for (const [key, n] of count) {
    note(h, "effect");
    if (n > 1) h.findings.push(`tool effect ${key} executed ${n} times`);
  }
}

/** No session stays locked: a Cancel on every live session answers OK or a decided-wait refusal in bounds. */
export async function checkNothingStaysLocked(c: Cluster, h: History): Promise<void> {
  const asker = c.host(0);
  for (const k of h.sessions.filter((s) => !s.deleted)) {
    await eventually(
      `${k.uid} is free again within ${LOCK_BOUND_MS} ms`,
      async () => {
        try {
          const s = await asker.api.cancel({ session: k.uid, reason: "final" });
          cancelWasTrue(h, `final cancel ${k.uid}`, s);
          return true;
        } catch (err) {
          const code = grpcCodeOf(err);
          // A decided wait is refused for good (FAILED_PRECONDITION): the session is not locked.
          if (code === GrpcStatus.FAILED_PRECONDITION) return true;
          if (code === GrpcStatus.ABORTED || code === GrpcStatus.UNAVAILABLE) return false;
          h.findings.push(`final cancel ${k.uid}: ${err instanceof Error ? err.message : String(err)}`);
          return true;
        }
      },
      LOCK_BOUND_MS,
    ).catch((err: unknown) => h.findings.push(err instanceof Error ? err.message : String(err)));
  }
}
