// Importing a reference (Go) journal into ours. Invariants: each session is imported on its own and
// atomically — written only after its uid passed the session-id rule (idUsable) and its whole chain verified
// with the shared hashing (verifyChain — the same check `verify` runs), and then in one transaction
// with every seq, prev_hash, content_hash and fence as the source stored them; a session that fails
// anywhere (its uid, its metadata row, a record out of range, its chain) is refused in the report
// with nothing of it written, and every other session proceeds (docs/migrating-from-go.md).
import { GO_WRITTEN_THROUGH_ANNOTATION } from "../../canon/input-hash-form.js";
import { ErrorCode, HostError, isHostError } from "../../errors/index.js";
import { verifyChain } from "../chain.js";
import { DEFAULT_LIMITS } from "../../limits/index.js";
import type { GoJournal, GoSession } from "./go-source.js";
import type { ImportedSessionMeta, Journal, JournalRecord } from "../types.js";

/** The import records where the Go-written records end (src/canon/input-hash-form.ts reads it). */
export { GO_WRITTEN_THROUGH_ANNOTATION };

export type GoImportOutcome =
  | { readonly uid: string; readonly status: "imported"; readonly records: number; readonly head: string }
  | { readonly uid: string; readonly status: "unchanged"; readonly records: number; readonly head: string }
  | {
      readonly uid: string;
      readonly status: "refused";
      /**
       * tampered/undecodable/gap as verify reports them; unreadable: also a metadata row or a record's
       * seq or fence the reader cannot take; invalid: the uid breaks the session-id rule; exists: the
       * uid holds a different session here.
       */
      readonly kind: "tampered" | "undecodable" | "gap" | "truncated" | "unreadable" | "invalid" | "exists";
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

/**
 * The session-id rule an imported uid must pass, as every id a request names does (idChars): 1 to
 * idChars characters, and — since the host only mints `sess-` + hex — nothing but letters, digits and
 * `-_.:`, starting with a letter or digit, so no path (`../../etc/x`), control or whitespace character.
 */
const IMPORTABLE_UID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** Why `uid` cannot be a session id here, or undefined when it can. */
export function uidProblem(uid: string, idChars: number = DEFAULT_LIMITS.idChars): string | undefined {
  if (uid.length === 0) return "the uid is empty";
  if (uid.length > idChars) return `the uid has ${uid.length} characters, beyond idChars (${idChars})`;
  if (!IMPORTABLE_UID.test(uid))
    return "the uid may hold only letters, digits and -_.: and must start with a letter or digit";
  return undefined;
}

/** Imports every session of `source` (or only `only`) into `target`; see the module invariants. */
export async function importGoJournal(
  source: GoJournal,
  target: Journal,
  only?: readonly string[],
  idChars: number = DEFAULT_LIMITS.idChars,
): Promise<GoImportReport> {
  const wanted = only === undefined ? undefined : new Set(only);
  const sessions = source.sessions().filter((s) => wanted === undefined || wanted.has(s.uid));
  if (wanted !== undefined) {
    for (const uid of wanted)
      if (!sessions.some((s) => s.uid === uid))
        throw new HostError(ErrorCode.NotFound, `session ${uid} is not in the Go journal`);
  }
  const outcomes: GoImportOutcome[] = [];
  for (const entry of sessions) {
    const { uid } = entry;
    const invalid = uidProblem(uid, idChars);
    if (invalid !== undefined) {
      outcomes.push({ uid, status: "refused", kind: "invalid", seq: 0, message: `session ${shown(uid)}: ${invalid}` });
    } else if ("problem" in entry) {
      outcomes.push({ uid, status: "refused", kind: "unreadable", seq: 0, message: entry.problem });
    } else {
      outcomes.push(await importOne(source, target, entry.session));
    }
  }
  return {
    layout: source.layout,
    sessions: outcomes,
    refused: outcomes.filter((o) => o.status === "refused").length,
  };
}

async function importOne(source: GoJournal, target: Journal, session: GoSession): Promise<GoImportOutcome> {
  const { uid } = session;
  let stored: ReturnType<GoJournal["records"]>;
  try {
    stored = source.records(uid);
  } catch (err) {
    if (!isHostError(err, ErrorCode.DataLoss)) throw err;
    return { uid, status: "refused", kind: "unreadable", seq: 0, message: err.message };
  }
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

/** A uid as a message shows it: clipped, so a hostile one cannot flood a report. */
function shown(uid: string): string {
  return JSON.stringify(uid.length > 64 ? `${uid.slice(0, 64)}…` : uid);
}
