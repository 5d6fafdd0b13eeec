// Keyset paging shared by every backend: sessions are listed by (created_at DESC, uid ASC) and the
// cursor is base64url (no padding) of "<created_at_ms>\0<uid>", so a page boundary never skips or
// repeats a row even while sessions are being created. Filters (harness, compute state, parent) narrow
// the same order, so a filtered page boundary is exact too.
import { ErrorCode, HostError } from "../errors/index.js";
import { STATE_NAMES } from "./compute-state.js";
import type { ComputeStateName, ListSessionsQuery } from "./types.js";

/** A ListSessions query's filters, checked: undefined means "any". */
export interface SessionFilter {
  readonly harness?: string;
  readonly parentUid?: string;
  readonly states?: readonly ComputeStateName[];
}

/** The query's filters; HostError InvalidArgument for a compute state no backend stores. */
export function sessionFilterOf(query: ListSessionsQuery): SessionFilter {
  const states = query.computeStates ?? [];
  for (const s of states) {
    if (!(STATE_NAMES as readonly string[]).includes(s))
      throw new HostError(ErrorCode.InvalidArgument, `unknown compute state ${JSON.stringify(s)}`);
  }
  return {
    ...(query.harness ? { harness: query.harness } : {}),
    ...(query.parentUid ? { parentUid: query.parentUid } : {}),
    ...(states.length > 0 ? { states: [...new Set(states)] } : {}),
  };
}

/** Rows fetched per query when streaming a session's records. */
export const READ_PAGE_SIZE = 1000;

export const DEFAULT_LIST_PAGE_SIZE = 50;
export const MAX_LIST_PAGE_SIZE = 500;

export interface PageCursor {
  readonly createdAtMs: number;
  readonly uid: string;
}

/** 0 (or less) means the default; anything above the maximum is clamped. */
export function normalizePageSize(pageSize: number): number {
  if (!Number.isFinite(pageSize) || pageSize <= 0) return DEFAULT_LIST_PAGE_SIZE;
  return Math.min(Math.floor(pageSize), MAX_LIST_PAGE_SIZE);
}

/** "" means the default project. */
export function normalizeProject(project: string): string {
  return project === "" ? "default" : project;
}

export function encodePageToken(cursor: PageCursor): string {
  return Buffer.from(`${cursor.createdAtMs}\u0000${cursor.uid}`, "utf8").toString("base64url");
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the cursor's separator on purpose; no key can contain it.
const CURSOR = /^(\d{1,16})\u0000(.+)$/s;

/** undefined for the first page (""); HostError InvalidArgument for anything unparseable. */
export function decodePageToken(token: string): PageCursor | undefined {
  if (token === "") return undefined;
  const invalid = () => new HostError(ErrorCode.InvalidArgument, "invalid page token");
  if (!BASE64URL.test(token) || token.length % 4 === 1) throw invalid();
  const match = CURSOR.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (!match) throw invalid();
  const createdAtMs = Number(match[1]);
  const uid = match[2];
  if (!Number.isSafeInteger(createdAtMs) || uid === undefined) throw invalid();
  return { createdAtMs, uid };
}
