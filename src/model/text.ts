// Text helpers shared by the built-in model and harnesses. Invariant: "the text of a message" means
// exactly the concatenation of its text parts, in order; every other part kind contributes nothing.
import { create } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "../gen/agentsessions/v1/common_pb.js";

/** Concatenates the text parts of a message ("" when there are none). */
export function messageText(message: Message | undefined): string {
  if (message === undefined) return "";
  let text = "";
  for (const part of message.parts) {
    if (part.part.case === "text") text += part.part.value.text;
  }
  return text;
}

/** A message with one text part. */
export function textMessage(role: string, text: string): Message {
  return create(MessageSchema, { role, parts: [{ part: { case: "text", value: { text } } }] });
}
