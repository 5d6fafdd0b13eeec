// Authors' own host-mediated tools (`serve --tools MODULE`, the testing kit's `tools`): a record of
// tool name → { args: a zod 4 object schema, run }. Invariants: a definition is checked with zod
// before the host serves anything (a bad name, a missing `run`, args that are not a zod object schema
// are refused, naming the tool); a call's arguments pass the tool's schema before `run` sees them (a
// failure is the call's executor error, which the model sees); `run` is called at most once per
// (session, idempotency key) — a re-driven call whose key already has a receipt is answered from the
// receipt and `run` is not called again. The host's tool policy and approval gates apply unchanged:
// this is only the executor behind them (src/controller/live-sink.ts).
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { ToolCall } from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { KeyedLines } from "./keyed-lines.js";
import type { ToolCallContext, ToolExecutor } from "./tools.js";

/** What `run` is given besides its arguments. */
export interface HostToolContext {
  /** The session's uid. */
  readonly session: string;
  /** Stable across re-drives of the same call: pass it on to external systems that de-duplicate. */
  readonly idempotencyKey: string;
  /** The call's id within its turn. */
  readonly callId: string;
  /** Aborted when the turn is cancelled or the host shuts down. */
  readonly signal: AbortSignal;
}

/** What `run` returns: a JSON object (the result's output), or text (output `{ text }`). */
export type HostToolOutput = JsonObject | string;

/** One host-mediated tool: its arguments' schema and the function the host runs for an allowed call. */
export interface HostTool<A = never> {
  readonly description?: string;
  /** A zod 4 object schema; the call's arguments are parsed with it before `run`. */
  readonly args: z.ZodType<A>;
  run(args: A, ctx: HostToolContext): HostToolOutput | Promise<HostToolOutput>;
}

/** A tools module's default export: tool name → definition. */
export type HostTools = Readonly<Record<string, HostTool<never>>>;

/** Declares a tool with typed arguments (an identity function that lets TypeScript infer `args`). */
export function hostTool<S extends z.ZodType<JsonObject>>(def: {
  readonly description?: string;
  readonly args: S;
  run(args: z.output<S>, ctx: HostToolContext): HostToolOutput | Promise<HostToolOutput>;
}): HostTool<never> {
  return def as unknown as HostTool<never>;
}

/** A tool name: 1–64 of letters, digits, `_`, `.` and `-` (the agent kit's rule). */
export const HOST_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A zod 4 object schema, from whichever copy of zod 4 the module imported (duck-typed on `_zod.def`). */
function isZodObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const internals = (value as { _zod?: { def?: { type?: unknown } } })._zod;
  return typeof (value as { safeParse?: unknown }).safeParse === "function" && internals?.def?.type === "object";
}

const Definition = z
  .object({
    description: z.string().optional(),
    args: z.custom<z.ZodType>(
      isZodObject,
      "args must be a zod 4 object schema (z.object({...}); zod 3 schemas are not supported: npm i zod@4)",
    ),
    run: z.custom<HostTool["run"]>((v) => typeof v === "function", "run must be a function (args, ctx) => output"),
  })
  .strict();

/**
 * Checks a value is a HostTools record; throws INVALID_ARGUMENT naming `where` and the first bad tool.
 * `reserved` are names the host already executes (they cannot be replaced).
 */
export function checkHostTools(value: unknown, where: string, reserved: readonly string[] = []): HostTools {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${where}: the default export must be an object of tool name → { args, run } (docs/harness-authoring.md, "Your own host-mediated tools")`,
    );
  const names = Object.keys(value);
  if (names.length === 0) throw new HostError(ErrorCode.InvalidArgument, `${where}: the default export has no tools`);
  for (const name of names) {
    if (!HOST_TOOL_NAME.test(name))
      throw new HostError(
        ErrorCode.InvalidArgument,
        `${where}: tool name ${JSON.stringify(name.slice(0, 80))} is not 1-64 of [A-Za-z0-9_.-]`,
      );
    if (reserved.includes(name))
      throw new HostError(
        ErrorCode.InvalidArgument,
        `${where}: tool ${name} is built into the host; choose another name`,
      );
    const parsed = Definition.safeParse((value as Record<string, unknown>)[name]);
    if (!parsed.success)
      throw new HostError(ErrorCode.InvalidArgument, `${where}: tool ${name}: ${z.prettifyError(parsed.error)}`);
    try {
      z.toJSONSchema(parsed.data.args);
    } catch (err) {
      throw new HostError(
        ErrorCode.InvalidArgument,
        `${where}: tool ${name}: its args schema has no JSON Schema form (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
  return value as HostTools;
}

interface Receipt {
  readonly session: string;
  readonly key: string;
  readonly tool: string;
  readonly output: JsonObject;
}

const ReceiptLine = z.object({
  session: z.string(),
  key: z.string(),
  tool: z.string(),
  output: z.record(z.string(), z.json()),
});

function parseReceipt(line: string): Receipt | undefined {
  try {
    const r = ReceiptLine.safeParse(JSON.parse(line));
    return r.success ? (r.data as Receipt) : undefined;
  } catch {
    return undefined;
  }
}

function receiptKey(session: string, key: string): string {
  return JSON.stringify([session, key]);
}

const JsonOutput = z.record(z.string(), z.json());

/** Runs the calls of the tools it was given; receipts in `receiptsFile` (one JSON line per completed run). */
export class HostToolExecutor implements ToolExecutor {
  /** The outputs of completed runs by (session, key) (missing file: none). */
  private readonly receipts: KeyedLines<Receipt>;
  constructor(
    private readonly tools: HostTools,
    receiptsFile: string,
  ) {
    this.receipts = new KeyedLines(receiptsFile, parseReceipt, (r) => receiptKey(r.session, r.key));
  }

  has(tool: string): boolean {
    return Object.hasOwn(this.tools, tool);
  }

  async execute(call: ToolCall, ctx: ToolCallContext): Promise<{ output: JsonObject }> {
    const def = this.has(call.tool) ? this.tools[call.tool] : undefined;
    if (!def) throw new Error(`no executor for tool "${call.tool.slice(0, 64)}"`);
    const done = this.receipts.get(receiptKey(ctx.sessionUid, call.idempotencyKey));
    if (done) return { output: done.output };
    const args = def.args.safeParse(call.args ?? {});
    if (!args.success) throw new Error(`${call.tool}: invalid arguments: ${z.prettifyError(args.error)}`);
    const ran = await def.run(args.data, {
      session: ctx.sessionUid,
      idempotencyKey: call.idempotencyKey,
      callId: call.id,
      signal: ctx.signal,
    });
    const shaped = JsonOutput.safeParse(typeof ran === "string" ? { text: ran } : ran);
    if (!shaped.success) throw new Error(`${call.tool}: run returned neither text nor a JSON object`);
    const output = shaped.data as JsonObject;
    this.receipts.put({ session: ctx.sessionUid, key: call.idempotencyKey, tool: call.tool, output });
    return { output };
  }
}

/** Routes the given tools' calls to `own`, every other call to `base` (the host's built-ins). */
export function withHostTools(base: ToolExecutor, own: HostToolExecutor): ToolExecutor {
  return {
    execute: (call, ctx) => (own.has(call.tool) ? own.execute(call, ctx) : base.execute(call, ctx)),
  };
}
