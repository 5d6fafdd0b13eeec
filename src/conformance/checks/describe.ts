// The describe check of either tier. Invariant: a harness passes only if Describe names an id and a
// version and declares exactly the tier it is being checked as.
import { Resumability } from "../../gen/agentsessions/v1/harness_pb.js";
import type { SuiteEnv } from "../env.js";
import { errText, fail } from "../evidence.js";
import type { Tier } from "../types.js";
import { pass, type Check } from "./check.js";

const WANT: Record<Tier, Resumability> = {
  stateless: Resumability.STATELESS_REPLAY,
  memory: Resumability.REQUIRES_MEMORY_SNAPSHOT,
};

export function describeCheck(tier: Tier): Check {
  return {
    id: `${tier}.describe-valid`,
    tier,
    title: "Describe answers a valid descriptor declaring this tier",
    async run(env: SuiteEnv) {
      let d: Awaited<ReturnType<typeof env.describe>>;
      try {
        d = await env.describe();
      } catch (err) {
        fail(`Describe failed: ${errText(err)}`);
      }
      const declared = d.capabilities?.resumability ?? Resumability.UNSPECIFIED;
      const problems: string[] = [];
      if (d.id === "") problems.push("descriptor id is empty");
      if (d.version === "") problems.push("descriptor version is empty (replay checks recorded versions against it)");
      if (declared !== WANT[tier])
        problems.push(`declares ${Resumability[declared] ?? declared} but is checked as ${Resumability[WANT[tier]]}`);
      if (problems.length > 0) fail(problems.join("; "));
      return pass(
        `id ${JSON.stringify(d.id)} version ${JSON.stringify(d.version)} declares ${Resumability[declared]}${d.models.length ? `, models ${d.models.join(",")}` : ""}`,
      );
    },
  };
}
