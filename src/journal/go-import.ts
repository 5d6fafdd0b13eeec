// Importing a reference (Go) journal into ours. Invariants: a session is written only after its whole
// chain verified with the shared hashing (verifyChain — the same check `verify` runs), and then in one
// transaction with every seq, prev_hash, content_hash and fence as the source stored them; a session
// that fails is refused with its first bad seq and nothing of it is written. Other sessions proceed.
import { GO_WRITTEN_THROUGH_ANNOTATION } from "../canon/input-hash-form.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { verifyChain } from "./chain.js";
import type { GoJournal, GoSession } from "./go-source.js";
import type { ImportedSessionMeta, Journal, JournalRecord } from "./types.js";

/** The import records where the Go-written records end (src/canon/input-hash-form.ts reads it). */
export { GO_WRITTEN_THROUGH_ANNOTATION };

export type GoImportOutcome =
  | { readonly uid: string; readonly status: "imported"; readonly records: number; readonly head: string }
  | { readonly uid: string; readonly status: "unchanged"; readonly records: number; readonly head: string }
  | {
      readonly uid: string;
      readonly status: "refused";
      /** tampered/undecodable/gap as verify reports them; exists: the uid holds a different session here. */
      readonly kind: "tampered" | "undecodable" | "gap" | "truncated" | "unreadable" | "exists";
      /** The first bad seq (0 for `exists`). */
      readonly seq: number;
      readonly message: string;
    };

export interface GoImportReport {
  readonly layout: GoJournal["layout"];
  readonly sessions: GoImportOutcome[];
  /** Sessions refused (the import as a whole fails when any was). */
  readonly refused: number;
}

/** Imports every session of `source` (or only `only`) into `target`; see the module invariants. */
export async function importGoJournal(
  source: GoJournal,
  target: Journal,
  only?: readonly string[],
): Promise<GoImportReport> {
  const wanted = only === undefined ? undefined : new Set(only);
  const sessions = source.sessions().filter((s) => wanted === undefined || wanted.has(s.uid));
  if (wanted !== undefined) {
    for (const uid of wanted)
      if (!sessions.some((s) => s.uid === uid))
        throw new HostError(ErrorCode.NotFound, `session ${uid} is not in the Go journal`);
  }
  const outcomes: GoImportOutcome[] = [];
  for (const session of sessions) outcomes.push(await importOne(source, target, session));
  return {
    layout: source.layout,
    sessions: outcomes,
    refused: outcomes.filter((o) => o.status === "refused").length,
  };
}

async function importOne(source: GoJournal, target: Journal, session: GoSession): Promise<GoImportOutcome> {
  const { uid } = session;
  const stored = source.records(uid);
  const last = stored.at(-1);
  const head = { seq: last?.seq ?? 0, hash: last?.contentHash ?? "" };
  const verdict = await verifyChain(uid, stored, head);
  if (!verdict.ok) return { uid, status: "refused", kind: verdict.kind, seq: verdict.seq, message: verdict.message };
  const existing = await target.getSession(uid);
  if (existing !== undefined) {
    if (existing.lastSeq === head.seq && existing.lastHash === head.hash)
      return { uid, status: "unchanged", records: head.seq, head: head.hash };
    return {
      uid,
      status: "refused",
      kind: "exists",
      seq: 0,
      message: `session ${uid}: a different session with this uid already exists in the target journal`,
    };
  }
  const records: JournalRecord[] = stored.map((r) => ({
    seq: r.seq,
    prevHash: r.prevHash,
    contentHash: r.contentHash,
    fence: r.fence,
    event: r.decode(),
  }));
  const fence = records.reduce((max, r) => Math.max(max, r.fence), session.fence);
  const meta: ImportedSessionMeta = {
    uid,
    project: session.project,
    name: session.name,
    harness: session.harness,
    model: session.model,
    parentUid: session.parentUid,
    forkSeq: session.forkSeq,
    labels: session.labels,
    annotations: { ...session.annotations, [GO_WRITTEN_THROUGH_ANNOTATION]: String(head.seq) },
    ...(session.origin === undefined ? {} : { origin: session.origin }),
    ...(session.identity === undefined ? {} : { identity: session.identity }),
    createdAtMs: session.createdAtMs,
    fence,
  };
  await target.importSession(meta, records);
  return { uid, status: "imported", records: head.seq, head: head.hash };
}
