// The replay check of new harness code against recorded sessions, offline (docs/versioning.md): what
// `harnesshost replay-check` runs and what a vitest suite imports. Invariants: a check never calls a
// model, runs a tool or writes to the sessions it reads (each session is copied into a private
// in-memory journal, its chain verified by the import); a session's result names the first divergent
// seq with the expected and actual event; the recorded harness version is not compared, since
// checking another version is the point.
import { fromJson } from "@bufbuild/protobuf";
import { newSessionUid } from "../controller/ids.js";
import { SessionLog } from "../projection/session-log.js";
import { DivergedError } from "../controller/serving-sink.js";
import { replaySession } from "../controller/turn.js";
import { isHostError } from "../errors/index.js";
import { EventSchema } from "../gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../journal/memory/journal.js";
import type { JournalRecord } from "../journal/types.js";
import type { HarnessFactory } from "../harness/types.js";

/** One recorded session to check: a label for reports (a file name or a uid) and its records. */
export interface RecordedSession {
  readonly label: string;
  readonly records: readonly JournalRecord[];
}

export interface ReplayCheckResult {
  readonly label: string;
  readonly ok: boolean;
  /** Completed turns replayed (all of them when ok). */
  readonly turns: number;
  /** The first divergence, when the new code did not reproduce the session. */
  readonly divergence?: {
    readonly seq: number;
    readonly expected: string;
    readonly actual: string;
    readonly message: string;
  };
  /** A session that could not be checked at all (unreadable records, a broken chain). */
  readonly error?: string;
}

/** Parses a JSON Lines export (`harnesshost export`): one proto3-JSON LogRecord per line. */
export function recordsFromJsonl(text: string): JournalRecord[] {
  const out: JournalRecord[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    if (raw.trim() === "") continue;
    let parsed: { seq?: unknown; prev_hash?: unknown; content_hash?: unknown; fence?: unknown; event?: unknown };
    try {
      parsed = JSON.parse(raw) as typeof parsed;
    } catch {
      throw new Error(`line ${line}: not valid JSON`);
    }
    const seq = Number(parsed.seq);
    if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`line ${line}: missing or invalid seq`);
    let event: JournalRecord["event"];
    try {
      event = fromJson(EventSchema, (parsed.event ?? {}) as Parameters<typeof fromJson<typeof EventSchema>>[1]);
    } catch (err) {
      throw new Error(
        `line ${line} (seq ${seq}): event does not decode: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    out.push({
      seq,
      prevHash: typeof parsed.prev_hash === "string" ? parsed.prev_hash : "",
      contentHash: typeof parsed.content_hash === "string" ? parsed.content_hash : "",
      fence: Number(parsed.fence ?? 0) || 0,
      event,
    });
  }
  return out;
}

/** Replays one recorded session under `factory` (one fresh instance for all its turns, as replay does). */
export async function replayCheckSession(
  factory: HarnessFactory,
  session: RecordedSession,
  signal: AbortSignal = new AbortController().signal,
): Promise<ReplayCheckResult> {
  const journal = new MemoryJournal();
  try {
    let executions: ReturnType<SessionLog["allExecutions"]>;
    try {
      executions = SessionLog.of(session.records).allExecutions();
    } catch (err) {
      return { label: session.label, ok: false, turns: 0, error: err instanceof Error ? err.message : String(err) };
    }
    const name = executions.find((e) => e.harness !== "")?.harness ?? "";
    const uid = newSessionUid();
    const fence = session.records.reduce((m, r) => Math.max(m, r.fence), 0);
    try {
      await journal.importSession(
        { uid, project: "replay-check", harness: name, createdAtMs: 0, fence },
        session.records,
      );
    } catch (err) {
      return { label: session.label, ok: false, turns: 0, error: err instanceof Error ? err.message : String(err) };
    }
    const harness = factory();
    const descriptor = await harness.describe();
    try {
      const res = await replaySession(
        { journal },
        { session: uid, binding: { harness, name, descriptor }, signal, anyVersion: true },
      );
      return { label: session.label, ok: true, turns: res.executions.length };
    } catch (err) {
      const done = executions.filter((e) => e.completed).length;
      if (err instanceof DivergedError)
        return {
          label: session.label,
          ok: false,
          turns: done,
          divergence: {
            seq: err.seq ?? 0,
            expected: err.expected ?? "",
            actual: err.actual ?? "",
            message: err.message,
          },
        };
      if (isHostError(err)) return { label: session.label, ok: false, turns: done, error: err.message };
      throw err;
    }
  } finally {
    await journal.close();
  }
}

/** Checks every session; the results are in input order. */
export async function replayCheck(
  factory: HarnessFactory,
  sessions: Iterable<RecordedSession> | AsyncIterable<RecordedSession>,
  signal?: AbortSignal,
): Promise<ReplayCheckResult[]> {
  const out: ReplayCheckResult[] = [];
  for await (const s of sessions) out.push(await replayCheckSession(factory, s, signal));
  return out;
}
