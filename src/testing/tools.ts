// The testing kit's tool executors: `hostTool({...})` definitions or plain functions, each run counted.
// Invariant: every real run of a tool (not one answered from its receipt) is appended to `runs` before
// it returns, so a test can assert a tool ran exactly once.
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  checkHostTools,
  type HostTool,
  type HostToolContext,
  type HostToolOutput,
  type HostTools,
} from "../controller/host-tools.js";
import { BUILTIN_TOOL_NAMES } from "../host/host.js";

/** A tool given as a bare function: no schema (its arguments arrive as the model sent them). */
export type ToolFunction = (args: JsonObject, ctx: HostToolContext) => HostToolOutput | Promise<HostToolOutput>;

/** One real run of a host-mediated tool. */
export interface ToolRun {
  readonly tool: string;
  readonly args: unknown;
  readonly session: string;
  readonly idempotencyKey: string;
}

/** The kit's tools as host tools, each run recorded in `runs`. */
export function countedTools(
  tools: Readonly<Record<string, HostTool<never> | ToolFunction>>,
  runs: ToolRun[],
): HostTools {
  const defs: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(tools))
    defs[name] = typeof given === "function" ? { args: z.looseObject({}), run: given } : given;
  const checked = checkHostTools(defs, "openTestHost tools", BUILTIN_TOOL_NAMES);
  const out: Record<string, HostTool<never>> = {};
  for (const [name, def] of Object.entries(checked)) {
    out[name] = {
      ...def,
      run: (args, ctx) => {
        runs.push({ tool: name, args, session: ctx.session, idempotencyKey: ctx.idempotencyKey });
        return def.run(args, ctx);
      },
    };
  }
  return out;
}
