// The harnesses built into harnesshost, by descriptor id. Invariant: each key equals the id its
// factory's harness describes itself with.
import type { HarnessFactory } from "../src/harness/types.js";
import askAgent from "./ask/index.js";
import askCounterAgent from "./askcounter/index.js";
import chatAgent from "./chatagent/index.js";
import counterAgent from "./counteragent/index.js";
import echoAgent from "./echoagent/index.js";
import notesAgent from "./notes/index.js";
import questionAgent from "./question/index.js";

export { AskAgent } from "./ask/index.js";
export { AskCounterAgent } from "./askcounter/index.js";
export { ChatAgent } from "./chatagent/index.js";
export { CounterAgent } from "./counteragent/index.js";
export { EchoAgent } from "./echoagent/index.js";
export { QuestionAgent } from "./question/index.js";

export const builtinHarnesses: Readonly<Record<string, HarnessFactory>> = {
  echo: echoAgent,
  counter: counterAgent,
  chat: chatAgent,
  ask: askAgent,
  askcounter: askCounterAgent,
  notes: notesAgent,
  question: questionAgent,
};
