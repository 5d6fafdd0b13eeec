// An example agent built with the kit (docs/agents.md): a harness-local tool (`add`, a pure function
// of its arguments), a host-mediated tool (`pay`, run by the host's executor at most once, parked for an
// operator's approval above 100.00), a budget and compaction. Invariant: every part is a kit part, so
// the agent is STATELESS_REPLAY: replay makes zero model calls and a re-driven turn makes the same calls.
import { z } from "zod";
import { agent, budget, compact, infer, system, tool } from "harnesshost/agent";
import type { Harness } from "harnesshost/sdk";

const add = tool({
  name: "add",
  description: "Adds two numbers.",
  args: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => ({ sum: a + b }),
});

const pay = tool({
  name: "pay",
  description: "Pays an amount in cents to a payee.",
  args: z.object({ to: z.string().min(1), cents: z.number().int().positive() }),
  approval: ({ cents }) => cents > 10_000,
});

export default function calc(): Harness {
  return agent({
    id: "calc",
    model: "echo",
    system: { part: system("You add numbers and pay bills. Use the tools.") },
    tools: [add, pay],
    budget: budget({ stepsPerTurn: 6, modelAttempts: 3, tokensPerSession: 200_000 }),
    compact: compact({ afterMessages: 20, keepTurns: 1 }),
    infer: infer(),
  });
}
