// The host's executor for the notes example's tools (`notes.read`, `notes.write`): notes live under
// the session's sandbox directory, <data>/sandbox/<session uid>/notes/<name>.txt. Invariants: the
// arguments are checked with zod before any file is touched (a name is 1–64 of [a-z0-9_-], so no path
// leaves the sandbox); a write is applied at most once per (session, idempotency key) — a re-driven
// call with a key already applied returns the first receipt and writes nothing — and the applied keys
// are recorded in <sandbox>/applied.jsonl, so the file counts real writes.
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { ToolCall } from "../../src/gen/agentsessions/v1/common_pb.js";
import { isSessionUid } from "../../src/controller/ids.js";
import type { ToolCallContext, ToolExecutor } from "../../src/controller/tools.js";

export const NOTES_READ_TOOL = "notes.read";
export const NOTES_WRITE_TOOL = "notes.write";

/** A note's name: 1–64 of lowercase letters, digits, `_` and `-`. */
export const NoteName = z.string().regex(/^[a-z0-9_-]{1,64}$/, "a note name is 1-64 of a-z, 0-9, _ and -");
export const ReadArgs = z.object({ name: NoteName }).strict();
/** At most 64 KiB of text per note. */
export const WriteArgs = z.object({ name: NoteName, text: z.string().max(65_536) }).strict();

export interface AppliedWrite {
  readonly key: string;
  readonly name: string;
  readonly bytes: number;
}

/** The session's sandbox directory. */
export function sandboxDir(dataDir: string, session: string): string {
  if (!isSessionUid(session)) throw new Error(`not a session uid: ${JSON.stringify(session.slice(0, 64))}`);
  return join(dataDir, "sandbox", session);
}

/** The writes applied in a session's sandbox, in order (missing file: none). */
export function appliedWrites(dataDir: string, session: string): AppliedWrite[] {
  let text: string;
  try {
    text = readFileSync(join(sandboxDir(dataDir, session), "applied.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as AppliedWrite);
}

export class NotesExecutor implements ToolExecutor {
  constructor(readonly dataDir: string) {}

  async execute(call: ToolCall, ctx: ToolCallContext): Promise<{ output: Record<string, string | number | boolean> }> {
    const dir = sandboxDir(this.dataDir, ctx.sessionUid);
    const notes = join(dir, "notes");
    if (call.tool === NOTES_READ_TOOL) {
      const { name } = parse(ReadArgs, call);
      try {
        return { output: { name, found: true, text: readFileSync(join(notes, `${name}.txt`), "utf8") } };
      } catch {
        return { output: { name, found: false, text: "" } };
      }
    }
    if (call.tool === NOTES_WRITE_TOOL) {
      const { name, text } = parse(WriteArgs, call);
      const done = appliedWrites(this.dataDir, ctx.sessionUid).find((w) => w.key === call.idempotencyKey);
      if (done) return { output: { name: done.name, bytes: done.bytes, duplicate: true } };
      mkdirSync(notes, { recursive: true });
      const file = join(notes, `${name}.txt`);
      writeFileSync(`${file}.tmp`, text, "utf8");
      renameSync(`${file}.tmp`, file);
      const applied: AppliedWrite = { key: call.idempotencyKey, name, bytes: Buffer.byteLength(text) };
      appendFileSync(join(dir, "applied.jsonl"), `${JSON.stringify(applied)}\n`, "utf8");
      return { output: { name, bytes: applied.bytes, duplicate: false } };
    }
    throw new Error(`no executor for tool ${JSON.stringify(call.tool.slice(0, 64))}`);
  }
}

function parse<S extends z.ZodType>(schema: S, call: ToolCall): z.infer<S> {
  const r = schema.safeParse(call.args ?? {});
  if (!r.success) throw new Error(`${call.tool}: ${z.prettifyError(r.error)}`);
  return r.data;
}
