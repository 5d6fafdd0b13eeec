// Listing the SQLite journal's sessions (Journal.listSessions): one keyset page, newest first, of one
// project, optionally filtered. Invariant: the unfiltered pages use two prepared statements; a filtered
// page prepares its statement once per filter shape (at most 2 × 2 × 5 × 2 shapes) and reuses it.
import type Database from "better-sqlite3";
import { decodePageToken, encodePageToken, normalizePageSize, normalizeProject, sessionFilterOf } from "../paging.js";
import type { ListSessionsQuery, SessionPage } from "../types.js";
import { SESSION_WITH_HEAD, type SessionDbRow, type Statements, sessionInfoOf } from "./statements.js";

type ListStatement = Database.Statement<(string | number)[], SessionDbRow>;

export class SqliteSessionList {
  private readonly filtered = new Map<string, ListStatement>();

  constructor(private readonly db: Database.Database) {}

  page(stmts: Statements, query: ListSessionsQuery): SessionPage {
    const project = normalizeProject(query.project);
    const size = normalizePageSize(query.pageSize);
    const cursor = decodePageToken(query.pageToken);
    const filter = sessionFilterOf(query);
    let rows: SessionDbRow[];
    if (filter.harness === undefined && filter.parentUid === undefined && filter.states === undefined) {
      rows = cursor
        ? stmts.listAfter.all(project, cursor.createdAtMs, cursor.createdAtMs, cursor.uid, size + 1)
        : stmts.listFirst.all(project, size + 1);
    } else {
      const where = ["s.project = ?"];
      const params: (string | number)[] = [project];
      if (filter.harness !== undefined) {
        where.push("s.harness = ?");
        params.push(filter.harness);
      }
      if (filter.parentUid !== undefined) {
        where.push("s.parent_uid = ?");
        params.push(filter.parentUid);
      }
      if (filter.states !== undefined) {
        where.push(`COALESCE(h.head_state, s.compute_state) IN (${filter.states.map(() => "?").join(", ")})`);
        params.push(...filter.states);
      }
      if (cursor) {
        where.push("(s.created_at_ms < ? OR (s.created_at_ms = ? AND s.uid > ?))");
        params.push(cursor.createdAtMs, cursor.createdAtMs, cursor.uid);
      }
      params.push(size + 1);
      const sql = `${SESSION_WITH_HEAD} WHERE ${where.join(" AND ")} ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`;
      rows = this.statement(sql).all(...params);
    }
    const page = rows.slice(0, size).map(sessionInfoOf);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > size && last ? encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }) : "";
    return { sessions: page, nextPageToken };
  }

  private statement(sql: string): ListStatement {
    let stmt = this.filtered.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare<(string | number)[], SessionDbRow>(sql);
      this.filtered.set(sql, stmt);
    }
    return stmt;
  }
}
