// The suite's model wrapper: counts every provider invocation and can fail the next one on purpose
// (the cut after MODEL_CALL). Invariant: `calls` counts exactly the requests handed to the real
// provider; an injected failure never reaches it and is not counted.
import { ErrorCode, HostError } from "../errors/index.js";
import type { InvokeOptions, ModelProvider, ModelRequest, ModelResponse } from "../model/types.js";

export class CountingModel implements ModelProvider {
  readonly name: string;
  calls = 0;
  private failures = 0;

  constructor(private readonly inner: ModelProvider) {
    this.name = `counting(${inner.name})`;
  }

  /** The next `n` invocations fail before reaching the provider. */
  failNext(n = 1): void {
    this.failures = n;
  }

  /** Disarms any pending injected failure; returns how many were left unused. */
  disarm(): number {
    const left = this.failures;
    this.failures = 0;
    return left;
  }

  async invoke(request: ModelRequest, opts: InvokeOptions): Promise<ModelResponse> {
    if (this.failures > 0) {
      this.failures--;
      // A defect-class failure: a harness whose requests ask the host to retry expected failures
      // (docs/protocol.md §16.1) must still see the cut, so the injected failure is never retried.
      throw new HostError(ErrorCode.Internal, "conformance: injected provider failure after MODEL_CALL (the cut)");
    }
    this.calls++;
    return this.inner.invoke(request, opts);
  }
}
