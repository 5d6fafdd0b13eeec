// Text helpers shared by the built-in model, harnesses and adapters. Invariant: "the text of a message"
// (or of a tool result's content) means exactly the concatenation of its text parts, in order; every
// other part kind contributes nothing.
import { create } from "@bufbuild/protobuf";
import { MessageSchema, type Message, type Part } from "../gen/agentsessions/v1/common_pb.js";

/** Concatenates the text parts among `parts` ("" when there are none). */
export function partsText(parts: readonly Part[]): string {
  let text = "";
  for (const part of parts) {
    if (part.part.case === "text") text += part.part.value.text;
  }
  return text;
}

/** Concatenates the text parts of a message ("" when there are none). */
export function messageText(message: Message | undefined): string {
  return message === undefined ? "" : partsText(message.parts);
}

/** One text part. */
export function textPart(text: string): Part {
  return create(MessageSchema, { parts: [{ part: { case: "text", value: { text } } }] }).parts[0]!;
}

/** A message with one text part. */
export function textMessage(role: string, text: string): Message {
  return create(MessageSchema, { role, parts: [{ part: { case: "text", value: { text } } }] });
}
