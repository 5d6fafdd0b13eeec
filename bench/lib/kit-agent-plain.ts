// The non-compacting agent of the agent_turn figure, as its own harness module (a module's default
// export is the harness the host serves). Invariant: it is bench/lib/kit-agent.ts's plainAgent, so
// both agents record their Start bytes in the same list.
import { plainAgent } from "./kit-agent.js";

export default plainAgent;
