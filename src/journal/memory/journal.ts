// In-process Journal for tests. Invariant: the same observable semantics as SqliteJournal — events are
// stored as protobuf binary (so readers get copies and nothing the caller mutates later leaks in), and
// every mutation runs synchronously before its promise settles, which makes it atomic.
import { collectEvents, collectRecords, onlyRecord } from "../collect.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import {
  requireAppendArgs,
  requireForkRange,
  requireSession,
  verifyChain,
  type StoredRecord,
  requireImportable,
} from "../chain.js";
import { mustExist, planAppend, planForkMarker, planImport } from "../plan.js";
import {
  advance,
  committedRecordOf,
  headOf,
  infoOf,
  listPage,
  type MemorySession,
  recordOf,
  storedOf,
} from "./rows.js";
import { READ_PAGE_SIZE } from "../paging.js";
import { projectPins, type PinnedSession } from "../pin.js";
import { byUid, importedRow, rowFromMeta, tipOfRow, validateMeta } from "../session-row.js";
import type {
  ImportedSessionMeta,
  CheckpointRow,
  VerifiedPosition,
  FencedAppend,
  ComputeStateName,
  ForkChild,
  FencedAppendOptions,
  Head,
  Journal,
  JournalRecord,
  SeqEvent,
  ListSessionsQuery,
  SessionInfo,
  SessionMetaInput,
  SessionPage,
  StoredRegistration,
  VerifyResult,
  VerifiedRecordSink,
} from "../types.js";

export class MemoryJournal implements Journal {
  readonly kind = "memory";
  readonly storage = { sharedByHosts: false, snapshotsInJournal: false } as const;
  private readonly sessions = new Map<string, MemorySession>();
  private readonly registrations = new Map<string, StoredRegistration>();
  private readonly checkpoints = new Map<string, Map<number, CheckpointRow>>();
  private readonly positions = new Map<string, VerifiedPosition>();
  private closed = false;

  async append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord> {
    return onlyRecord(this.commit(session, expectedLastSeq, fence, [event]));
  }

  async appendBatch(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]> {
    return this.commit(session, expectedLastSeq, fence, events);
  }

  private commit(session: string, expectedLastSeq: number, fence: number, events: readonly Event[]): JournalRecord[] {
    this.assertOpen();
    requireAppendArgs(session, expectedLastSeq, fence);
    const existing = this.sessions.get(session);
    const plan = planAppend(session, existing && tipOfRow(existing.row), expectedLastSeq, fence, events);
    const blobs = plan.records.map((r) => noteEventBytes(r.event, toBinary(EventSchema, r.event)));
    if (plan.records.length === 0) return [];
    const target = mustExist(session, existing);
    for (const [i, r] of plan.records.entries()) target.records.push(storedOf(r, blobs[i] as Uint8Array));
    advance(target.row, plan.after);
    return plan.records.map((r, i) => committedRecordOf(r, blobs[i] as Uint8Array));
  }

  async newFence(session: string): Promise<number> {
    this.assertOpen();
    requireSession(session);
    const target = mustExist(session, this.sessions.get(session));
    target.row.fence += 1;
    target.row.updatedAtMs = Date.now();
    return target.row.fence;
  }

  async appendUnderNewFence(
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    opts: FencedAppendOptions = {},
  ): Promise<FencedAppend> {
    this.assertOpen();
    requireAppendArgs(session, expectedLastSeq, 0);
    if (events.length === 0)
      throw new HostError(ErrorCode.InvalidArgument, "appendUnderNewFence needs at least one event");
    const existing = this.sessions.get(session);
    // Everything that can throw runs before the first mutation: all or none.
    const plan = planAppend(session, existing && tipOfRow(existing.row), expectedLastSeq, "mint", events);
    const { fence, records } = plan;
    const blobs = records.map((r) => noteEventBytes(r.event, toBinary(EventSchema, r.event)));
    const target = mustExist(session, existing);
    for (const [i, r] of records.entries()) target.records.push(storedOf(r, blobs[i] as Uint8Array));
    advance(target.row, plan.after);
    const last = records[records.length - 1];
    if (opts.checkpointDigest !== undefined && last !== undefined) {
      this.storeCheckpoint({
        session,
        seq: last.seq,
        contentHash: last.contentHash,
        digest: opts.checkpointDigest,
        createdAtMs: Date.now(),
      });
    }
    return { fence, records: records.map((r, i) => committedRecordOf(r, blobs[i] as Uint8Array)) };
  }

  async currentFence(session: string): Promise<number> {
    this.assertOpen();
    return this.sessions.get(session)?.row.fence ?? 0;
  }

  async head(session: string): Promise<Head> {
    this.assertOpen();
    const s = this.sessions.get(session);
    return s ? headOf(s.row) : { seq: 0, hash: "" };
  }

  async *read(session: string, from = 1, to = 0): AsyncIterable<JournalRecord> {
    this.assertOpen();
    const s = this.sessions.get(session);
    if (!s) return;
    let next = Math.max(1, from);
    for (;;) {
      const last = to > 0 ? Math.min(to, s.records.length) : s.records.length;
      if (next > last) return;
      const pageEnd = Math.min(last, next + READ_PAGE_SIZE - 1);
      const page = s.records.slice(next - 1, pageEnd).map(recordOf);
      for (const rec of page) yield rec;
      next = pageEnd + 1;
    }
  }

  async readRange(session: string, from?: number, to?: number): Promise<JournalRecord[]> {
    return collectRecords(this.read(session, from, to));
  }

  async readEvents(session: string, from?: number, to?: number): Promise<SeqEvent[]> {
    return collectEvents(this.read(session, from, to));
  }

  async verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    this.assertOpen();
    const s = this.sessions.get(session);
    if (!s) return verifyChain(session, [], { seq: 0, hash: "" });
    const stored: StoredRecord[] = s.records.map((r) => ({
      seq: r.seq,
      prevHash: r.prevHash,
      contentHash: r.contentHash,
      fence: r.fence,
      decode: () => fromBinary(EventSchema, r.blob),
    }));
    return verifyChain(session, stored, headOf(s.row), onRecord);
  }

  async fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]> {
    this.assertOpen();
    requireSession(parent);
    requireSession(child);
    const source = this.sessions.get(parent);
    if (!source) throw new HostError(ErrorCode.NotFound, `session ${parent} not found`);
    requireForkRange(parent, atSeq, headOf(source.row));
    if (this.sessions.has(child)) throw new HostError(ErrorCode.AlreadyExists, `session ${child} already exists`);
    const prefix = source.records.slice(0, atSeq);
    const last = prefix[prefix.length - 1];
    if (last === undefined) throw new Error("fork prefix is empty");
    const plan = planForkMarker(
      child,
      atSeq,
      last.contentHash,
      projectPins(undefined, prefix.map(recordOf)),
      meta.forkedBy,
    );
    const [marker] = plan.records;
    if (marker === undefined) throw new Error("fork marker was not chained");
    const row = rowFromMeta({ ...meta, uid: child, parentUid: meta.parentUid ?? parent, forkSeq: atSeq }, Date.now());
    const records = [...prefix, storedOf(marker, toBinary(EventSchema, marker.event))];
    this.sessions.set(child, { row, records });
    advance(row, plan.after);
    return records.map(recordOf);
  }

  async removeEmptySession(uid: string): Promise<boolean> {
    this.assertOpen();
    const s = this.sessions.get(uid);
    if (s === undefined || s.records.length > 0) return false;
    this.sessions.delete(uid);
    return true;
  }

  async deleteSession(uid: string): Promise<boolean> {
    this.assertOpen();
    this.checkpoints.delete(uid);
    this.positions.delete(uid);
    return this.sessions.delete(uid);
  }

  async recordBytes(session: string, through: number): Promise<number> {
    this.assertOpen();
    let bytes = 0;
    for (const r of this.sessions.get(session)?.records ?? []) if (r.seq <= through) bytes += r.blob.byteLength;
    return bytes;
  }

  async forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]> {
    this.assertOpen();
    requireSession(parent);
    const uids = new Set<string>();
    for (const c of children) {
      requireSession(c.meta.uid);
      if (this.sessions.has(c.meta.uid) || uids.has(c.meta.uid))
        throw new HostError(ErrorCode.AlreadyExists, `session ${c.meta.uid} already exists`);
      uids.add(c.meta.uid);
    }
    const markers: JournalRecord[] = [];
    for (const c of children) {
      const marker = (await this.fork(parent, c.meta.uid, atSeq, c.meta)).at(-1);
      if (marker === undefined) throw new Error("fork marker was not chained");
      if (c.checkpointDigest !== undefined) {
        this.storeCheckpoint({
          session: c.meta.uid,
          seq: marker.seq,
          contentHash: marker.contentHash,
          digest: c.checkpointDigest,
          createdAtMs: Date.now(),
        });
      }
      markers.push(marker);
    }
    return markers;
  }

  async importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    this.assertOpen();
    requireImportable(meta, records);
    if (this.sessions.has(meta.uid)) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
    const row = importedRow(meta);
    const stored = records.map((r) => storedOf(r, toBinary(EventSchema, r.event)));
    this.sessions.set(meta.uid, { row, records: stored });
    advance(row, planImport(tipOfRow(row), records).after);
    return infoOf(row);
  }

  async createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    this.assertOpen();
    validateMeta(meta);
    if (this.sessions.has(meta.uid)) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
    const row = rowFromMeta(meta, Date.now());
    this.sessions.set(meta.uid, { row, records: [] });
    return infoOf(row);
  }

  async getSession(uid: string): Promise<SessionInfo | undefined> {
    this.assertOpen();
    const s = this.sessions.get(uid);
    return s ? infoOf(s.row) : undefined;
  }

  async listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    this.assertOpen();
    return listPage(
      [...this.sessions.values()].map((s) => s.row),
      query,
    );
  }

  async countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    this.assertOpen();
    const out: Partial<Record<ComputeStateName, number>> = {};
    for (const { row } of this.sessions.values()) out[row.computeState] = (out[row.computeState] ?? 0) + 1;
    return out;
  }

  async pinnedSessions(harness: string): Promise<PinnedSession[]> {
    this.assertOpen();
    const out: PinnedSession[] = [];
    for (const { row } of this.sessions.values())
      if (row.pin?.harness === harness) out.push({ uid: row.uid, version: row.pin.version, digest: row.pin.digest });
    return out.sort(byUid);
  }

  async allSessionUids(): Promise<string[]> {
    this.assertOpen();
    return [...this.sessions.keys()].sort();
  }

  async putRegistration(reg: StoredRegistration): Promise<void> {
    this.assertOpen();
    this.registrations.set(reg.name, { ...reg });
  }

  async getRegistration(name: string): Promise<StoredRegistration | undefined> {
    this.assertOpen();
    const reg = this.registrations.get(name);
    return reg ? { ...reg } : undefined;
  }

  async deleteRegistration(name: string, uid: string): Promise<boolean> {
    this.assertOpen();
    if (this.registrations.get(name)?.uid !== uid) return false;
    return this.registrations.delete(name);
  }

  async listRegistrations(): Promise<StoredRegistration[]> {
    this.assertOpen();
    return [...this.registrations.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((r) => ({ ...r }));
  }

  async putCheckpoint(row: CheckpointRow): Promise<void> {
    this.assertOpen();
    this.storeCheckpoint(row);
  }

  private storeCheckpoint(row: CheckpointRow): void {
    const bySeq = this.checkpoints.get(row.session) ?? new Map<number, CheckpointRow>();
    bySeq.set(row.seq, { ...row });
    this.checkpoints.set(row.session, bySeq);
  }

  async latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    this.assertOpen();
    const bySeq = this.checkpoints.get(session);
    if (!bySeq || bySeq.size === 0) return undefined;
    const seq = Math.max(...bySeq.keys());
    const row = bySeq.get(seq);
    return row ? { ...row } : undefined;
  }

  async putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    this.assertOpen();
    const held = this.positions.get(row.session);
    if (held && held.seq >= row.seq) return;
    this.positions.set(row.session, { ...row, projection: row.projection.slice() });
  }

  async verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    this.assertOpen();
    const row = this.positions.get(session);
    return row ? { ...row, projection: row.projection.slice() } : undefined;
  }

  /** Memory cannot become unreadable. */
  async probe(): Promise<void> {
    this.assertOpen();
  }

  async checkpointDigests(): Promise<string[]> {
    this.assertOpen();
    const digests = new Set<string>();
    for (const bySeq of this.checkpoints.values()) for (const row of bySeq.values()) digests.add(row.digest);
    return [...digests].sort();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
  }
}
