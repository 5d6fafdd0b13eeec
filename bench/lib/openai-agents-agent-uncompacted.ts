// docs/examples/openai-agents-agent.ts's hosted agent with compaction off, as a harness module (a
// module's default export is the harness the host serves), for bench/profile/adapter-turn.ts's
// `uncompacted`: what a long session costs per turn when its conversation grows unbounded. Invariant:
// it is the example's harness — the same id, agent graph and host tools — but for `compact: false`.
import { openAIAgentsHarness } from "harnesshost/openai-agents";
import type { Harness } from "harnesshost/sdk";
import { triage } from "../../docs/examples/openai-agents-agent.js";

export default function agentsExampleUncompacted(): Harness {
  return openAIAgentsHarness({ id: "agents-weather", agent: triage, hostTools: ["book"], compact: false });
}
