// Reading the reference (Go) host's SQLite journal. Invariant: nothing here writes to the source —
// it is opened read-only — and a layout this build does not know (a newer PRAGMA user_version, or no
// events table) is refused before any row is read. Both layouts the reference has written are read:
// the current one (user_version 2, with its harness registry) and the v0.1.2-era one (unstamped;
// `sessions` with or without the metadata columns), whose sessions may exist only as events.
import { fromBinary, fromJsonString } from "@bufbuild/protobuf";
import type Database from "better-sqlite3";
import { openSqlite } from "../sqlite/driver.js";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, IdentityRefSchema, OriginSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import type { StoredRecord } from "../chain.js";
import type { SessionInfo } from "../types.js";

/** The newest reference schema stamp this build reads. */
export const GO_SCHEMA_VERSION = 2;

/** One session of a Go journal: its metadata row (defaults where the layout has no column). */
export type GoSession = Pick<
  SessionInfo,
  | "uid"
  | "project"
  | "name"
  | "harness"
  | "model"
  | "parentUid"
  | "forkSeq"
  | "labels"
  | "annotations"
  | "origin"
  | "identity"
  | "createdAtMs"
  | "fence"
>;

/** A stored Go record: chain fields as written, the event decoded on demand (verifyChain's shape). */
export interface GoRecord extends StoredRecord {
  readonly fence: number;
}

/** A session of a Go journal as listed: its row read, or why it cannot be (that session alone is refused). */
export type GoSessionEntry =
  | { readonly uid: string; readonly session: GoSession }
  | { readonly uid: string; readonly problem: string };

export interface GoJournal {
  /** "v2" (stamped, current) or "v0.1.2" (unstamped, pre-registry). */
  readonly layout: "v2" | "v0.1.2";
  /** Every session, by uid; a row that cannot be read is listed with its problem, never thrown. */
  sessions(): GoSessionEntry[];
  /** Throws DATA_LOSS when a record's seq or fence is out of range (only that session is affected). */
  records(uid: string): GoRecord[];
  close(): void;
}

type Row = Record<string, unknown>;

export function openGoJournal(path: string): GoJournal {
  let db: Database.Database;
  try {
    db = openSqlite(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new HostError(ErrorCode.InvalidArgument, `cannot open Go journal ${path}: ${errorText(err)}`, { cause: err });
  }
  try {
    const version = Number(db.pragma("user_version", { simple: true }));
    if (version > GO_SCHEMA_VERSION || version < 0)
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `Go journal ${path} has schema version ${version}; this build reads versions up to ${GO_SCHEMA_VERSION}`,
      );
    const tables = new Set(
      db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((t) => t.name),
    );
    const eventColumns = tables.has("events") ? columnsOf(db, "events") : new Set<string>();
    for (const c of ["session", "seq", "prev_hash", "hash", "fence", "event"])
      if (!eventColumns.has(c))
        throw new HostError(ErrorCode.FailedPrecondition, `${path} is not a Go journal: events.${c} is missing`);
    const sessionColumns = tables.has("sessions") ? columnsOf(db, "sessions") : new Set<string>();
    return readerOf(db, version === GO_SCHEMA_VERSION ? "v2" : "v0.1.2", sessionColumns);
  } catch (err) {
    db.close();
    throw err;
  }
}

function readerOf(db: Database.Database, layout: GoJournal["layout"], columns: ReadonlySet<string>): GoJournal {
  const selectEvents = db
    .prepare<[string], { seq: bigint; prev_hash: string; hash: string; fence: bigint; event: Uint8Array }>(
      "SELECT seq, prev_hash, hash, fence, event FROM events WHERE session = ? ORDER BY seq",
    )
    .safeIntegers(true);
  return {
    layout,
    sessions() {
      const rows = new Map<string, Row>();
      if (columns.has("session")) {
        for (const r of db.prepare<[], Row>("SELECT * FROM sessions").safeIntegers(true).all())
          rows.set(String(r["session"]), r);
      }
      for (const r of db.prepare<[], { session: string }>("SELECT DISTINCT session FROM events").all())
        if (!rows.has(r.session)) rows.set(r.session, { session: r.session });
      return [...rows.values()].map(entryOf).sort((a, b) => a.uid.localeCompare(b.uid));
    },
    records(uid) {
      return selectEvents.all(uid).map((r) => {
        const seq = safe(r.seq, `session ${uid}: seq`);
        const bytes = r.event;
        return {
          seq,
          prevHash: r.prev_hash,
          contentHash: r.hash,
          fence: safe(r.fence, `session ${uid}: fence at seq ${seq}`),
          decode: (): Event => fromBinary(EventSchema, bytes),
        };
      });
    },
    close() {
      db.close();
    },
  };
}

function entryOf(r: Row): GoSessionEntry {
  const uid = String(r["session"]);
  try {
    return { uid, session: sessionOf(r) };
  } catch (err) {
    return { uid, problem: errorText(err) };
  }
}

function sessionOf(r: Row): GoSession {
  const uid = String(r["session"]);
  const text = (k: string): string => (typeof r[k] === "string" ? (r[k] as string) : "");
  const createdNs = typeof r["created_at"] === "bigint" ? (r["created_at"] as bigint) : 0n;
  const session: GoSession = {
    uid,
    project: text("project"),
    name: text("name"),
    harness: text("harness"),
    model: text("model"),
    parentUid: text("parent_uid"),
    forkSeq: typeof r["fork_seq"] === "bigint" ? safe(r["fork_seq"] as bigint, `session ${uid}: fork_seq`) : 0,
    labels: stringMap(uid, "labels", text("labels")),
    annotations: stringMap(uid, "annotations", text("annotations")),
    createdAtMs: Number(createdNs / 1_000_000n),
    fence: typeof r["fence"] === "bigint" ? safe(r["fence"] as bigint, `session ${uid}: fence`) : 0,
  };
  const origin = text("origin");
  const identity = text("identity");
  return {
    ...session,
    ...(origin === "" ? {} : { origin: protoJsonOf(uid, "origin", () => fromJsonString(OriginSchema, origin)) }),
    ...(identity === ""
      ? {}
      : { identity: protoJsonOf(uid, "identity", () => fromJsonString(IdentityRefSchema, identity)) }),
  };
}

function columnsOf(db: Database.Database, table: "events" | "sessions"): Set<string> {
  return new Set(
    db
      .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name),
  );
}

function stringMap(uid: string, what: string, text: string): Record<string, string> {
  if (text === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HostError(ErrorCode.DataLoss, `session ${uid}: ${what} is not JSON`, { cause: err });
  }
  if (parsed === null) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === "string"))
    throw new HostError(ErrorCode.DataLoss, `session ${uid}: ${what} is not a string map`);
  return parsed as Record<string, string>;
}

function protoJsonOf<T>(uid: string, what: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new HostError(ErrorCode.DataLoss, `session ${uid}: ${what} cannot be decoded: ${errorText(err)}`, {
      cause: err,
    });
  }
}

function safe(value: bigint, what: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new HostError(ErrorCode.DataLoss, `${what} ${value} is out of range`);
  return n;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
