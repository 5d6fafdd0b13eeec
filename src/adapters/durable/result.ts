// How a tool's value crosses the journal (docs/integrations.md). Invariant: one mapping both ways —
// a string is a text content part, a plain JSON object is the result's output (the agent kit's own
// rule for a local tool's result, agent/tools.ts), any other JSON value is its JSON text — so a value
// reported live and the value a re-driven turn reads back agree.
import type { JsonObject } from "@bufbuild/protobuf";
import { ToolResult_Code, type ToolResult } from "../../gen/agentsessions/v1/common_pb.js";
import { localToolResult, toolErrorResult } from "../../agent/tools.js";
import { partsText } from "../../model/text.js";
import type { AppliedResult } from "./applied.js";

function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** A JSON-safe copy of what a tool returned (undefined becomes null; class instances their JSON). */
export function jsonValueOf(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** The ToolResult that records an applied result under `id`. */
export function toolResultOf(id: string, applied: AppliedResult): ToolResult {
  if ("error" in applied) return toolErrorResult(id, applied.error);
  const v = applied.value;
  return localToolResult(id, typeof v === "string" || isPlainObject(v) ? v : JSON.stringify(v));
}

/** What the framework's tool call gets back from a journaled result. */
export function appliedOf(result: ToolResult, tool: string): AppliedResult {
  if (result.isError) {
    if (result.code === ToolResult_Code.APPROVAL_DENIED) return { error: `the operator denied ${tool}` };
    return { error: result.error || `${tool} failed` };
  }
  if (result.output !== undefined) return { value: result.output };
  return { value: partsText(result.content) };
}
