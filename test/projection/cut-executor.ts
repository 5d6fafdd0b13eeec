// A tool executor for the projection tests that can cut a turn right after the real executor ran: by
// cancelling the operation (`cutNext`) or by never answering, as a lost host would (`loseNext`).
// Invariant: the inner executor always runs to completion first, so every cut leaves an effect that
// happened without a committed TOOL_RESULT.
import type { ToolCall } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { ToolCallContext, ToolExecutor } from "../../src/controller/index.js";

type Plan = { readonly kind: "cut"; readonly abort: AbortController } | { readonly kind: "lose" };

export class CutExecutor implements ToolExecutor {
  private plan: Plan | undefined;
  private released: (() => void) | undefined;
  private ranSignal: (() => void) | undefined;

  constructor(private readonly inner: ToolExecutor) {}

  /** The next execution aborts `abort` (the operation's signal) after the inner executor ran. */
  cutNext(abort: AbortController): void {
    this.plan = { kind: "cut", abort };
  }

  /**
   * The next execution never answers until `release` (then fails): the host is lost between the effect
   * and its result. `ran` resolves once the inner executor has run.
   */
  loseNext(): { ran: Promise<void>; release: () => void } {
    this.plan = { kind: "lose" };
    const ran = new Promise<void>((r) => (this.ranSignal = r));
    return { ran, release: () => this.released?.() };
  }

  /** Drops a plan the operation never reached. */
  clear(): void {
    this.plan = undefined;
  }

  async execute(call: ToolCall, ctx: ToolCallContext): ReturnType<ToolExecutor["execute"]> {
    const result = await this.inner.execute(call, ctx);
    const plan = this.plan;
    this.plan = undefined;
    if (plan?.kind === "cut") {
      plan.abort.abort();
      throw new Error("cut after the executor ran");
    }
    if (plan?.kind === "lose") {
      const released = new Promise<void>((r) => (this.released = r));
      this.ranSignal?.();
      await released;
      throw new Error("the host was lost");
    }
    return result;
  }
}
