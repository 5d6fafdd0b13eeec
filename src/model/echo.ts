// The built-in deterministic "echo" model (docs/protocol.md §14.1). Invariant: the answer is a pure function of the
// request — one assistant text part, "echo:" + the text of the last message — so replays and tests
// can predict it exactly.
import { messageText, textMessage } from "./text.js";
import { ModelInterruptedError, type ModelProvider } from "./types.js";

export const echoModel: ModelProvider = {
  name: "echo",
  async invoke(request, opts) {
    if (opts.signal?.aborted) throw new ModelInterruptedError("model call cancelled", { cause: opts.signal.reason });
    const text = `echo:${messageText(request.messages[request.messages.length - 1])}`;
    opts.onDelta?.(text);
    return { message: textMessage("assistant", text) };
  },
};
