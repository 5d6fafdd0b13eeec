// The PostgreSQL journal's tables beside the records: the session catalog's listings, harness
// registrations, checkpoint rows, verified positions and the pin and compute-state indexes. Invariant:
// each method is one statement on the journal's pool (its own implicit transaction); writes map driver
// errors through the journal's `write`, so a race is Conflict like every other write.
import type { ComputeStateName, PinnedSession } from "../types.js";
import type { CheckpointRow, ListSessionsQuery, SessionPage, StoredRegistration, VerifiedPosition } from "../types.js";
import { decodePageToken, encodePageToken, normalizePageSize, normalizeProject, sessionFilterOf } from "../paging.js";
import { registrationColumnsOf } from "../columns.js";
import type { Queryable } from "./reads.js";
import {
  type CheckpointDbRow,
  checkpointOf,
  type HeadDbRow,
  PIN_SELECT,
  type RegistrationDbRow,
  registrationOf,
  type SessionDbRow,
  sessionInfoOf,
} from "./rows.js";

/** Runs a single-statement write, mapping its errors as every journal write does. */
export type WriteStatement = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

export class PgSideTables {
  constructor(
    /** The journal's pool, after checking that the journal is still open. */
    private readonly q: () => Queryable,
    private readonly write: WriteStatement,
  ) {}

  async listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    const pool = this.q();
    const project = normalizeProject(query.project);
    const size = normalizePageSize(query.pageSize);
    const cursor = decodePageToken(query.pageToken);
    const filter = sessionFilterOf(query);
    const params: unknown[] = [project];
    const where = ["project = $1"];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.harness !== undefined) where.push(`harness = ${param(filter.harness)}`);
    if (filter.parentUid !== undefined) where.push(`parent_uid = ${param(filter.parentUid)}`);
    if (filter.states !== undefined) where.push(`compute_state = ANY(${param(filter.states)}::text[])`);
    if (cursor) {
      const at = param(cursor.createdAtMs);
      where.push(`(created_at_ms < ${at} OR (created_at_ms = ${at} AND uid > ${param(cursor.uid)}))`);
    }
    const limit = param(size + 1);
    const result = await pool.query<SessionDbRow>(
      `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY created_at_ms DESC, uid ASC LIMIT ${limit}`,
      params,
    );
    const page = result.rows.slice(0, size).map(sessionInfoOf);
    const last = page[page.length - 1];
    const nextPageToken =
      result.rows.length > size && last ? encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }) : "";
    return { sessions: page, nextPageToken };
  }

  async headRow(session: string): Promise<HeadDbRow | undefined> {
    const result = await this.q().query<HeadDbRow>(
      `SELECT fence, last_seq, last_hash, compute_state, ${PIN_SELECT} FROM sessions WHERE uid = $1`,
      [session],
    );
    return result.rows[0];
  }

  async recordBytes(session: string, through: number): Promise<number> {
    const result = await this.q().query<{ bytes: string | null }>(
      "SELECT SUM(octet_length(event))::text AS bytes FROM events WHERE session = $1 AND seq <= $2",
      [session, through],
    );
    return Number(result.rows[0]?.bytes ?? 0);
  }

  async countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    const result = await this.q().query<{ state: ComputeStateName; n: string }>(
      "SELECT compute_state AS state, count(*) AS n FROM sessions GROUP BY compute_state",
    );
    return Object.fromEntries(result.rows.map((r) => [r.state, Number(r.n)]));
  }

  async pinnedSessions(harness: string): Promise<PinnedSession[]> {
    const result = await this.q().query<PinnedSession>(
      `SELECT uid, pin_version AS version, pin_digest AS digest FROM sessions
       WHERE pin_harness = $1 AND pin_seq > 0 ORDER BY uid`,
      [harness],
    );
    return result.rows;
  }

  async allSessionUids(): Promise<string[]> {
    const result = await this.q().query<{ uid: string }>("SELECT uid FROM sessions ORDER BY uid");
    return result.rows.map((r) => r.uid);
  }

  async putRegistration(reg: StoredRegistration): Promise<void> {
    await this.write(`store registration ${reg.name}`, () =>
      this.q().query(
        `INSERT INTO harnesses (name, uid, spec, spec_digest, state, retire_reason, retired_at_ms, created_at_ms, updated_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (name) DO UPDATE SET uid = EXCLUDED.uid, spec = EXCLUDED.spec, spec_digest = EXCLUDED.spec_digest,
           state = EXCLUDED.state, retire_reason = EXCLUDED.retire_reason, retired_at_ms = EXCLUDED.retired_at_ms,
           created_at_ms = EXCLUDED.created_at_ms, updated_at_ms = EXCLUDED.updated_at_ms`,
        Object.values(registrationColumnsOf(reg)),
      ),
    );
  }

  async getRegistration(name: string): Promise<StoredRegistration | undefined> {
    const result = await this.q().query<RegistrationDbRow>("SELECT * FROM harnesses WHERE name = $1", [name]);
    const row = result.rows[0];
    return row ? registrationOf(row) : undefined;
  }

  async deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.write(`delete registration ${name}`, async () => {
      const result = await this.q().query("DELETE FROM harnesses WHERE name = $1 AND uid = $2", [name, uid]);
      return (result.rowCount ?? 0) > 0;
    });
  }

  async listRegistrations(): Promise<StoredRegistration[]> {
    const result = await this.q().query<RegistrationDbRow>("SELECT * FROM harnesses ORDER BY name");
    return result.rows.map(registrationOf);
  }

  async putCheckpoint(row: CheckpointRow): Promise<void> {
    await this.write(`store checkpoint ${row.session}@${row.seq}`, () =>
      this.q().query(
        `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
           created_at_ms = EXCLUDED.created_at_ms`,
        [row.session, row.seq, row.contentHash, row.digest, row.createdAtMs],
      ),
    );
  }

  async latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    const result = await this.q().query<CheckpointDbRow>(
      "SELECT session, seq, content_hash, digest, created_at_ms FROM checkpoints WHERE session = $1 ORDER BY seq DESC LIMIT 1",
      [session],
    );
    const row = result.rows[0];
    return row ? checkpointOf(row) : undefined;
  }

  async putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    await this.write(`store verified position ${row.session}@${row.seq}`, () =>
      this.q().query(
        `INSERT INTO verified_positions (session, seq, hash, projection, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (session) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, projection = EXCLUDED.projection,
           digest = EXCLUDED.digest, created_at_ms = EXCLUDED.created_at_ms
         WHERE EXCLUDED.seq > verified_positions.seq`,
        [row.session, row.seq, row.hash, Buffer.from(row.projection), row.digest, row.createdAtMs],
      ),
    );
  }

  async verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    const result = await this.q().query<{
      seq: string;
      hash: string;
      projection: Buffer;
      digest: string;
      created_at_ms: string;
    }>(
      "SELECT seq::text AS seq, hash, projection, digest, created_at_ms::text AS created_at_ms FROM verified_positions WHERE session = $1",
      [session],
    );
    const row = result.rows[0];
    return row
      ? {
          session,
          seq: Number(row.seq),
          hash: row.hash,
          projection: new Uint8Array(row.projection),
          digest: row.digest,
          createdAtMs: Number(row.created_at_ms),
        }
      : undefined;
  }

  async checkpointDigests(): Promise<string[]> {
    const result = await this.q().query<{ digest: string }>("SELECT DISTINCT digest FROM checkpoints ORDER BY digest");
    return result.rows.map((r) => r.digest);
  }
}
