// The host's built-in executor for the demo tool `demo.write`, kept beside the `ask` harness (and used
// by `askcounter`), which names the tool from here; the host runs it, the harness only calls it.
// Invariant: exactly-once per (session, idempotency key) — a re-driven call with a key already written
// returns the first write's receipt and appends nothing, so the file counts real executions.
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ToolCall } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { ToolCallContext, ToolExecutor } from "../../src/controller/tools.js";

export const DEMO_WRITE_TOOL = "demo.write";

export interface DemoWrite {
  readonly session: string;
  readonly key: string;
  readonly text: string;
}

/** Reads the writes file (missing file: none). */
export function readDemoWrites(file: string): DemoWrite[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as DemoWrite);
}

export class DemoWriteExecutor implements ToolExecutor {
  constructor(readonly file: string) {}

  async execute(call: ToolCall, ctx: ToolCallContext): Promise<{ output: { written: boolean; duplicate: boolean } }> {
    if (call.tool !== DEMO_WRITE_TOOL)
      throw new Error(`no executor for tool "${call.tool}" (this host executes only ${DEMO_WRITE_TOOL})`);
    const text = typeof call.args?.["text"] === "string" ? call.args["text"] : "";
    const duplicate = readDemoWrites(this.file).some(
      (w) => w.session === ctx.sessionUid && w.key === call.idempotencyKey,
    );
    if (!duplicate) {
      mkdirSync(dirname(this.file), { recursive: true });
      const line: DemoWrite = { session: ctx.sessionUid, key: call.idempotencyKey, text };
      appendFileSync(this.file, `${JSON.stringify(line)}\n`, "utf8");
    }
    return { output: { written: true, duplicate } };
  }
}
