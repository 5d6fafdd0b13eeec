// The applied store of the framework adapters (docs/integrations.md): what a tool returned, kept by
// (session uid, idempotency key) outside the journal. Invariant: a tool whose key is in the store is
// never run again for that session — its stored result is served instead — so a turn re-driven after
// a crash between the tool's run and its journaled result does not repeat the tool's effect.
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

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
 * line is written before `put` resolves): at most once across host restarts on this machine.
 */
export function fileApplied(dir: string): AppliedStore {
  const fileOf = (sessionUid: string) => join(dir, `${encodeURIComponent(sessionUid)}.jsonl`);
  return {
    async get(sessionUid, key) {
      let text: string;
      try {
        text = readFileSync(fileOf(sessionUid), "utf8");
      } catch {
        return undefined;
      }
      for (const raw of text.split("\n")) {
        if (raw.trim() === "") continue;
        const line = JSON.parse(raw) as Line;
        if (line.key === key) return line.result;
      }
      return undefined;
    },
    async put(sessionUid, key, result) {
      mkdirSync(dir, { recursive: true });
      appendFileSync(fileOf(sessionUid), `${JSON.stringify({ key, result } satisfies Line)}\n`, "utf8");
    },
  };
}
