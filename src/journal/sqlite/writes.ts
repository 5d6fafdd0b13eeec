// The SQLite journal's write transactions. Invariant: every write is one BEGIN IMMEDIATE transaction
// (or, inside a group commit, one savepoint of it) that reads the session's head, plans the write
// (../plan.ts: CAS, then fence, then the chain), inserts the planned records and moves the head row,
// the compute state and the pin with them — so the head never drifts from the records.
import { toBinary } from "@bufbuild/protobuf";
import type Database from "better-sqlite3";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import { requireForkRange } from "../chain.js";
import { sessionColumnsOf } from "../columns.js";
import type { QueuedWrite, WriteOutcome } from "../commit-queue.js";
import type { SessionPin } from "../pin.js";
import { type AppendPlan, planAppend, planForkMarker, planImport } from "../plan.js";
import { rowFromMeta, type SessionRow, setPin, tipOfRow } from "../session-row.js";
import type { FencedAppend, ForkChild, JournalRecord, SessionMetaInput } from "../types.js";
import { hashColumn } from "./hash.js";
import { pinThrough } from "./reads.js";
import { isBusy, isPrimaryKeyViolation } from "./schema.js";
import { pinOfRow, type Statements, tipOfHead } from "./statements.js";
import type { SqliteVerifiedPositions } from "./verified.js";

/** The write transactions of one connection, each run as BEGIN IMMEDIATE … COMMIT. */
export class SqliteWrites {
  readonly commitTx: (
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ) => JournalRecord[];
  readonly fencedTx: (
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    checkpointDigest: string | undefined,
  ) => FencedAppend;
  readonly forkTx: (parent: string, child: string, atSeq: number, meta: SessionMetaInput) => JournalRecord;
  readonly forkAllTx: (parent: string, atSeq: number, children: readonly ForkChild[]) => JournalRecord[];
  /** Several queued writes in one transaction, each in its own savepoint. */
  readonly batchTx: (writes: readonly QueuedWrite[]) => WriteOutcome[];
  /** Creates the imported session `row` holding `records` verbatim; AlreadyExists when its uid exists. */
  readonly importTx: (row: SessionRow, records: readonly JournalRecord[]) => void;
  /** Removes the session, its records, checkpoint rows and verified position; true when it existed. */
  readonly deleteTx: (uid: string) => boolean;

  constructor(
    private readonly db: Database.Database,
    private readonly stmts: Statements,
    positions: SqliteVerifiedPositions,
  ) {
    this.commitTx = db.transaction(this.commitInTx.bind(this)).immediate;
    this.forkTx = db.transaction(this.forkInTx.bind(this)).immediate;
    this.forkAllTx = db.transaction((parent: string, atSeq: number, children: readonly ForkChild[]) =>
      children.map((c) => {
        const marker = this.forkInTx(parent, c.meta.uid, atSeq, c.meta);
        if (c.checkpointDigest !== undefined) {
          this.stmts.putCheckpoint.run(c.meta.uid, marker.seq, marker.contentHash, c.checkpointDigest, Date.now());
        }
        return marker;
      }),
    ).immediate;
    this.fencedTx = db.transaction(this.fencedInTx.bind(this)).immediate;
    // Each write of a batch runs in a savepoint (better-sqlite3 nests a transaction function that way):
    // a write that throws is rolled back alone and the batch carries on, unless SQLite rolled back the
    // whole transaction (I/O error, full disk), which then fails every write of the batch.
    this.batchTx = db.transaction((writes: readonly QueuedWrite[]) =>
      writes.map((w): WriteOutcome => {
        try {
          return { ok: true, ...this.writeInTx(w) };
        } catch (err) {
          if (!this.db.inTransaction) throw err;
          return { ok: false, error: mapWriteError(writeLabel(w), err) };
        }
      }),
    ).immediate;
    this.importTx = db.transaction((row: SessionRow, records: readonly JournalRecord[]) => {
      if (this.stmts.insertSession.run(sessionColumnsOf(row)).changes === 0)
        throw new HostError(ErrorCode.AlreadyExists, `session ${row.uid} already exists`);
      this.insertPlanned(row.uid, planImport(tipOfRow(row), records), Date.now(), false);
    }).immediate;
    this.deleteTx = db.transaction((uid: string) => {
      this.stmts.deleteEvents.run(uid);
      this.stmts.deleteCheckpoints.run(uid);
      positions.remove(uid);
      return this.stmts.deleteSession.run(uid).changes > 0;
    }).immediate;
  }

  /** One write as its own transaction (or, inside the batch transaction, its own savepoint). */
  writeInTx(w: QueuedWrite): { fence: number; records: JournalRecord[] } {
    switch (w.kind) {
      case "append":
        return { fence: w.fence, records: this.commitTx(w.session, w.expectedLastSeq, w.fence, w.events) };
      case "fenced":
        return this.fencedTx(w.session, w.expectedLastSeq, w.events, w.checkpointDigest);
      default: {
        const never: never = w;
        throw new Error(`unknown queued write ${String(never)}`);
      }
    }
  }

  private commitInTx(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): JournalRecord[] {
    const row = this.stmts.selectHead.get(session);
    const plan = planAppend(session, tipOfHead(row), expectedLastSeq, fence, events);
    if (plan.records.length === 0) return plan.records;
    const now = Date.now();
    this.insertPlanned(session, plan, now, row?.has_head === 1);
    return plan.records;
  }

  /** CAS, mint, chain, insert and (optionally) the checkpoint row: one transaction, one WAL commit. */
  private fencedInTx(
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    checkpointDigest: string | undefined,
  ): FencedAppend {
    const row = this.stmts.selectHead.get(session);
    const plan = planAppend(session, tipOfHead(row), expectedLastSeq, "mint", events);
    const now = Date.now();
    const minted = this.stmts.mintFence.get(now, session);
    if (!minted) throw new Error("fence mint returned no row");
    if (minted.fence !== plan.fence) throw new Error(`fence mint returned ${minted.fence}, planned ${plan.fence}`);
    this.insertPlanned(session, plan, now, row?.has_head === 1);
    const { records } = plan;
    const last = records[records.length - 1];
    if (checkpointDigest !== undefined && last !== undefined) {
      this.stmts.putCheckpoint.run(session, last.seq, last.contentHash, checkpointDigest, now);
    }
    return { fence: minted.fence, records };
  }

  private forkInTx(parent: string, child: string, atSeq: number, meta: SessionMetaInput): JournalRecord {
    const source = this.stmts.selectHead.get(parent);
    if (!source) throw new HostError(ErrorCode.NotFound, `session ${parent} not found`);
    requireForkRange(parent, atSeq, { seq: source.last_seq, hash: source.last_hash });
    if (this.stmts.selectHead.get(child))
      throw new HostError(ErrorCode.AlreadyExists, `session ${child} already exists`);
    const forkPoint = this.stmts.recordHash.get(parent, atSeq);
    if (!forkPoint) throw new HostError(ErrorCode.DataLoss, `session ${parent}: record seq ${atSeq} is missing`);
    const inherited = atSeq === source.last_seq ? pinOfRow(source) : pinThrough(this.stmts, parent, atSeq);
    const plan = planForkMarker(child, atSeq, forkPoint.content_hash, inherited, meta.forkedBy);
    const now = Date.now();
    const row = rowFromMeta({ ...meta, uid: child, parentUid: meta.parentUid ?? parent, forkSeq: atSeq }, now);
    row.fence = plan.fence;
    setPin(row, inherited);
    this.stmts.insertSession.run(sessionColumnsOf(row));
    const copied = this.stmts.copyPrefix.run(child, parent, atSeq).changes;
    if (copied !== atSeq) {
      throw new HostError(ErrorCode.DataLoss, `session ${parent}: expected ${atSeq} records to fork, found ${copied}`);
    }
    this.insertPlanned(child, plan, now, false);
    const [record] = plan.records;
    if (record === undefined) throw new Error("fork marker was not chained");
    return record;
  }

  /** Inserts a plan's records and moves the head row; the append that creates the head row also anchors it. */
  private insertPlanned(session: string, plan: AppendPlan, now: number, hasHead: boolean): void {
    for (const r of plan.records) {
      this.stmts.insertEvent.run(
        session,
        r.seq,
        hashColumn(r.prevHash),
        hashColumn(r.contentHash),
        r.fence,
        noteEventBytes(r.event, toBinary(EventSchema, r.event)),
      );
    }
    if (plan.records.length === 0) return;
    const { after } = plan;
    if (plan.pinChanged) this.writePin(session, after.pin);
    this.stmts.moveHead.run(session, after.seq, after.hash, after.computeState, now);
    if (!hasHead) this.stmts.anchorHead.run(after.seq, after.hash, after.computeState, now, session);
  }

  private writePin(session: string, pin: SessionPin | undefined): void {
    this.stmts.writePin.run(pin?.seq ?? 0, pin?.harness ?? "", pin?.version ?? "", pin?.digest ?? "", session);
  }
}

/** A primary-key race is Conflict, an exhausted busy wait SessionBusy; HostErrors and the rest pass through. */
export function mapWriteError(what: string, err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (isPrimaryKeyViolation(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: seq conflict (a concurrent writer committed first)`, {
      cause: err,
    });
  }
  if (isBusy(err)) return new HostError(ErrorCode.SessionBusy, `${what}: database is locked`, { cause: err });
  return err;
}

export function writeLabel(w: QueuedWrite): string {
  return w.kind === "append" ? `append to session ${w.session}` : `append to session ${w.session} under a new fence`;
}
