// The chat harness, built on the agent kit (docs/agents.md): no tools, the stock budget and infer
// loop. Invariant: the model sees the conversation — the optional system prompt of the execution's
// config, then the inputs and completed answers of the history in journal order, then this turn's
// inputs — so the turn is a pure function of the journal and replays exactly.
import { z } from "zod";
import { agent } from "../../src/agent/index.js";
import type { Harness } from "../../src/harness/types.js";

const ChatConfig = z.object({ system_prompt: z.string().optional() });

/** Parses the per-execution config: empty means none; anything but a JSON object of the schema throws. */
export function parseChatConfig(config: Uint8Array): z.infer<typeof ChatConfig> {
  if (config.length === 0) return {};
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(config));
  } catch (err) {
    throw new Error("chat config is not valid JSON", { cause: err });
  }
  const parsed = ChatConfig.safeParse(json);
  if (!parsed.success) throw new Error(`chat config is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Version 2: built on the kit (requests carry the budget's host params; usage is journaled). */
export const CHAT_VERSION = "2";

export class ChatAgent implements Harness {
  readonly model: string;
  private readonly inner: Harness;

  constructor(opts: { model?: string } = {}) {
    this.model = opts.model ?? "echo";
    this.inner = agent({
      id: "chat",
      version: CHAT_VERSION,
      model: this.model,
      system: (start) => parseChatConfig(start.config).system_prompt,
    });
  }

  describe() {
    return this.inner.describe();
  }

  run(...args: Parameters<Harness["run"]>): Promise<void> {
    return this.inner.run(...args);
  }
}

export default function chatAgent(): Harness {
  return new ChatAgent();
}
