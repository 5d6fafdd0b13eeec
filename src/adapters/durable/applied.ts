// The applied store of the framework adapters (docs/integrations.md): what a tool returned, kept by
// (session uid, idempotency key) outside the journal. Invariant: a tool whose key is in the store is
// never run again for that session — its stored result is served instead — so a turn re-driven after
// a crash between the tool's run and its journaled result does not repeat the tool's effect.
import { join } from "node:path";
import { KeyedLines } from "../../controller/keyed-lines.js";

/** What a tool produced: a JSON value, or the text of the error it threw. */
export type AppliedResult = { readonly value: unknown } | { readonly error: string };

export interface AppliedStore {
  get(sessionUid: string, key: string): Promise<AppliedResult | undefined>;
  /** Durable before it resolves (for a store that outlives the process). */
  put(sessionUid: string, key: string, result: AppliedResult): Promise<void>;
}

/** A store in RAM: at most once per process (enough for tests and a host that never restarts). */
export function memoryApplied(): AppliedStore {
  const byKey = new Map<string, AppliedResult>();
  return {
    async get(sessionUid, key) {
      return byKey.get(`${sessionUid}\u0000${key}`);
    },
    async put(sessionUid, key, result) {
      byKey.set(`${sessionUid}\u0000${key}`, result);
    },
  };
}

interface Line {
  readonly key: string;
  readonly result: AppliedResult;
}

/**
 * A store in `<dir>/<session uid>.jsonl`, one appended line per result (synchronous append, so the
 * line is written before `put` resolves): at most once across host restarts on this machine. Each
 * session's file is read once per process (the process is its only writer); a torn last line is no
 * result (controller/keyed-lines.ts).
 */
export function fileApplied(dir: string): AppliedStore {
  const files = new Map<string, KeyedLines<Line>>();
  const fileOf = (sessionUid: string): KeyedLines<Line> => {
    let file = files.get(sessionUid);
    if (!file) {
      file = new KeyedLines(join(dir, `${encodeURIComponent(sessionUid)}.jsonl`), lineOf, (l) => l.key);
      files.set(sessionUid, file);
    }
    return file;
  };
  return {
    async get(sessionUid, key) {
      return fileOf(sessionUid).get(key)?.result;
    },
    async put(sessionUid, key, result) {
      fileOf(sessionUid).put({ key, result });
    },
  };
}

/** A stored line, or undefined for one that does not parse (a torn tail: that result was not applied). */
function lineOf(text: string): Line | undefined {
  try {
    const line = JSON.parse(text) as Partial<Line> | null;
    return typeof line?.key === "string" && line.result !== undefined ? (line as Line) : undefined;
  } catch {
    return undefined;
  }
}
