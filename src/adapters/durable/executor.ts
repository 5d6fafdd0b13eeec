// The host side of an adapter's host tools (docs/integrations.md): a ToolExecutor that runs a
// framework tool's own function when the host executes the call. Invariant: at most once per (session,
// idempotency key) — the applied store is read before the function runs and written before the result
// goes back to the host, so a Resume after a cut between the host's TOOL_CALL and TOOL_RESULT serves
// the kept result instead of running the tool again.
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ToolCall, ToolResultSchema } from "../../gen/agentsessions/v1/common_pb.js";
import type { ToolCallContext, ToolExecutor } from "../../controller/tools.js";
import { memoryApplied, type AppliedResult, type AppliedStore } from "./applied.js";
import { jsonValueOf, toolResultOf } from "./result.js";

/** A tool function the host runs: the call's arguments in, a JSON value out. */
export type HostToolFn = (args: JsonObject, ctx: ToolCallContext & { readonly idempotencyKey: string }) => unknown;

export function hostToolExecutor(
  tools: Readonly<Record<string, HostToolFn>>,
  applied: AppliedStore = memoryApplied(),
): ToolExecutor {
  return {
    async execute(call: ToolCall, ctx: ToolCallContext): Promise<MessageInitShape<typeof ToolResultSchema>> {
      const fn = Object.hasOwn(tools, call.tool) ? tools[call.tool] : undefined;
      if (!fn)
        throw new Error(
          `no executor for tool "${call.tool.slice(0, 64)}" (this executor runs ${Object.keys(tools).join(", ")})`,
        );
      const kept = await applied.get(ctx.sessionUid, call.idempotencyKey);
      let result: AppliedResult;
      if (kept) result = kept;
      else {
        try {
          result = { value: jsonValueOf(await fn(call.args ?? {}, { ...ctx, idempotencyKey: call.idempotencyKey })) };
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          result = { error: `${call.tool} failed: ${err instanceof Error ? err.message : String(err)}` };
        }
        await applied.put(ctx.sessionUid, call.idempotencyKey, result);
      }
      return toolResultOf(call.id, result);
    },
  };
}
