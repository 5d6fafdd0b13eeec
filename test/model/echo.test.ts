// The built-in echo model is deterministic: "echo:" + the text of the last message (docs/protocol.md §14.1).
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MessageSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { echoModel, messageText, ModelInterruptedError, textMessage } from "../../src/model/index.js";

describe("echoModel", () => {
  it("answers echo: + the concatenated text parts of the last message, as one delta", async () => {
    const last = create(MessageSchema, {
      role: "user",
      parts: [
        { part: { case: "text", value: { text: "a" } } },
        { part: { case: "data", value: { data: { ignored: true } } } },
        { part: { case: "text", value: { text: "b" } } },
      ],
    });
    const deltas: string[] = [];
    const res = await echoModel.invoke(
      { model: "echo", messages: [textMessage("user", "first"), last] },
      { onDelta: (d) => deltas.push(d) },
    );
    expect(res.message.role).toBe("assistant");
    expect(res.message.parts).toHaveLength(1);
    expect(messageText(res.message)).toBe("echo:ab");
    expect(deltas).toEqual(["echo:ab"]);
  });

  it('answers "echo:" when there are no messages', async () => {
    const res = await echoModel.invoke({ model: "echo", messages: [] }, {});
    expect(messageText(res.message)).toBe("echo:");
  });

  it("refuses an already-cancelled call as an interrupt", async () => {
    await expect(
      echoModel.invoke({ model: "echo", messages: [] }, { signal: AbortSignal.abort() }),
    ).rejects.toBeInstanceOf(ModelInterruptedError);
  });
});
