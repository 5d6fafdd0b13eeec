// The reference model of session semantics for the model-based tests: small and obviously correct, in
// the terms of docs/protocol.md §5.8. A session holds its completed outputs, a memory counter, and at
// most one pending turn, owned by the session that ran it; a fork copies the state at a seq it was seen
// at, so everything pending in the copy belongs to an ancestor. Invariant: nothing here reads the
// journal — the only observations it stores are seqs, ids and gate tuples the host returned.
import type { ApprovalRef } from "../../src/controller/index.js";

export type HarnessName = "echo" | "writer" | "ask" | "asker" | "counter" | "askcounter";

export const MEMORY: ReadonlySet<HarnessName> = new Set(["counter", "askcounter"]);
/** Harnesses whose gate runs the demo.write executor when approved. */
export const EXECUTES: ReadonlySet<HarnessName> = new Set(["ask", "askcounter"]);
export const CHOICES = ["red", "blue"] as const;

export interface MGate {
  state: "open" | "decided";
  approved?: boolean;
  reason?: string;
  readonly ref: ApprovalRef;
}

export interface MTurn {
  /** The session that ran the turn (and recorded its effects). */
  readonly owner: string;
  gate?: MGate;
  /** A controller-mediated call whose executor ran with no result recorded. */
  cut?: boolean;
  /** Whether the executor already ran for this turn's call (it de-duplicates on its key). */
  ranExecutor: boolean;
}

export interface MState {
  pending?: MTurn;
  /** Memory harnesses: turns completed in the lineage (the RAM counter). */
  count: number;
  /** Outputs of every completed turn in the lineage, in order (what replay serves). */
  outputs: string[];
}

export interface MSession {
  readonly uid: string;
  readonly harness: HarnessName;
  state: MState;
  /** The state at each seq the session was observed at (fork points). */
  points: { seq: number; state: MState }[];
}

export interface Model {
  sessions: MSession[];
  /** demo.write executions that must have happened for this model's sessions. */
  writes: number;
}

export function cloneState(s: MState): MState {
  return structuredClone(s);
}

/** The session's own gate, open or decided without receipt: new input is refused (§5.8 rule 5). */
export function ownUnreceiptedGate(s: MSession): MGate | undefined {
  const p = s.state.pending;
  return p && p.owner === s.uid ? p.gate : undefined;
}

/** Session.pending_approval: the own open gate (§5.8 rule 4). */
export function ownOpenGate(s: MSession): MGate | undefined {
  const g = ownUnreceiptedGate(s);
  return g?.state === "open" ? g : undefined;
}

/** Resume refuses an unfinished effect inherited from an ancestor (§5.8 rule 6). */
export function resumeRefused(s: MSession): boolean {
  const p = s.state.pending;
  return p !== undefined && p.owner !== s.uid && (p.gate !== undefined || p.cut === true);
}

/** What a completed gated turn outputs. */
export function gateOutput(harness: HarnessName, gate: MGate, count: number): string {
  const word = gate.approved ? "approved" : "denied";
  switch (harness) {
    case "ask":
      return `receipt: ${word}`;
    case "askcounter":
      return `${count} ${word}`;
    case "asker":
      return gate.approved ? `answer: ${gate.reason}` : "declined";
    case "echo":
    case "writer":
    case "counter":
      throw new Error(`${harness} has no gates`);
    default: {
      const never: never = harness;
      throw new Error(`unknown harness ${String(never)}`);
    }
  }
}

/** Completes the pending turn (approved executors run at most once per turn). */
export function complete(m: Model, s: MSession, output: string): void {
  const p = s.state.pending;
  if (p?.gate?.approved && EXECUTES.has(s.harness) && !p.ranExecutor) m.writes += 1;
  s.state.pending = undefined;
  if (MEMORY.has(s.harness)) s.state.count += 1;
  s.state.outputs.push(output);
}

/** A child forked at a point: its copy of the state, every pending turn inherited. */
export function forkChild(parent: MSession, uid: string, point: { seq: number; state: MState }): MSession {
  return {
    uid,
    harness: parent.harness,
    state: cloneState(point.state),
    points: [
      ...parent.points.filter((p) => p.seq <= point.seq).map((p) => ({ seq: p.seq, state: cloneState(p.state) })),
      { seq: point.seq + 1, state: cloneState(point.state) },
    ],
  };
}
