// Model payload logging, the opt-in of `serve --log-payloads` (docs/operations.md, "Logs"). Invariant:
// without it no model request or response body reaches a log line (the host logs ids, sizes and codes
// only); with it every live model call writes one `model request` line (model, messages, tool names)
// and one `model response` line (message, usage), at info — and those lines still pass through the
// logger's secret redaction like every other line.
import { toJson } from "@bufbuild/protobuf";
import { MessageSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { InvokeOptions, ModelProvider, ModelRequest, ModelResponse } from "../model/types.js";
import type { Log } from "../obs/log.js";

class PayloadLoggingModel implements ModelProvider {
  readonly name: string;
  constructor(
    private readonly inner: ModelProvider,
    private readonly log: Log,
  ) {
    this.name = inner.name;
  }

  invoke(request: ModelRequest, opts: InvokeOptions): Promise<ModelResponse> {
    this.log.info(
      {
        model: request.model,
        messages: request.messages.map((m) => toJson(MessageSchema, m)),
        ...(request.tools?.length ? { tools: request.tools.map((t) => t.name) } : {}),
      },
      "model request",
    );
    return this.inner.invoke(request, opts).then((response) => {
      const u = response.usage;
      this.log.info(
        {
          model: request.model,
          message: toJson(MessageSchema, response.message),
          ...(u ? { input_tokens: Number(u.inputTokens), output_tokens: Number(u.outputTokens) } : {}),
        },
        "model response",
      );
      return response;
    });
  }
}

/** `model` with every live call's request and response bodies logged (serve --log-payloads). */
export function logModelPayloads(model: ModelProvider, log: Log): ModelProvider {
  return new PayloadLoggingModel(model, log.child({ payload: true }));
}
