// The system part (docs/agents.md). Invariant: the system messages are a function of the Start alone
// (its config, never a clock or RAM), so replay builds the same requests.
import type { StartInfo } from "../harness/types.js";
import { textMessage } from "../model/text.js";
import type { SystemPart } from "./parts.js";

/** A fixed prompt, or one computed from the Start (undefined or "" for none). */
export function system(prompt: string | ((start: StartInfo) => string | undefined)): SystemPart {
  return (start) => {
    const text = typeof prompt === "string" ? prompt : prompt(start);
    return text === undefined || text === "" ? [] : [textMessage("system", text)];
  };
}
