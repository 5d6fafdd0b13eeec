// An OpenAI-compatible endpoint in the test process that answers like the echo model and counts every
// provider invocation per prompt text. Invariant: it outlives host crashes, so its counts are the
// ground truth for "at most one extra model call per cut". A test may hold a call open with `onCall`
// (e.g. to kill the host while the model call is in flight: the turn is then certainly cut).
import { ChatEndpoint, contentText } from "../fixtures/chat-endpoint.js";

export class CountingModel extends ChatEndpoint {
  /** Invocations per prompt text. */
  readonly calls = new Map<string, number>();
  /** Called on every invocation (after counting it); the answer waits for the promise it returns. */
  onCall: ((text: string) => Promise<void> | undefined) | undefined;

  constructor() {
    super((body) => {
      const text = contentText(body.messages?.at(-1)?.content);
      this.calls.set(text, (this.calls.get(text) ?? 0) + 1);
      const held = this.onCall?.(text);
      return held === undefined ? `echo:${text}` : held.then(() => `echo:${text}`);
    });
  }

  /** Every invocation. */
  get total(): number {
    return this.requests;
  }
}
