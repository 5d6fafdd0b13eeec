// Routes a mediated tool call to the executor of its tool by name. Invariant: a call goes to exactly the
// executor listed under its tool name (own keys only, never an inherited property); a tool nobody
// executes is an executor error naming the tools this host does execute.
import type { ToolCall } from "../gen/agentsessions/v1/common_pb.js";
import type { ToolCallContext, ToolExecutor } from "./tools.js";

/** Routes each call to the executor of its tool; a tool nobody executes is an executor error. */
export class ToolRouter implements ToolExecutor {
  constructor(private readonly routes: Readonly<Record<string, ToolExecutor>>) {}

  execute(call: ToolCall, ctx: ToolCallContext): ReturnType<ToolExecutor["execute"]> {
    const target = Object.hasOwn(this.routes, call.tool) ? this.routes[call.tool] : undefined;
    if (!target)
      return Promise.reject(
        new Error(
          `no executor for tool "${call.tool.slice(0, 64)}" (this host executes ${Object.keys(this.routes).join(", ")})`,
        ),
      );
    return target.execute(call, ctx);
  }
}
