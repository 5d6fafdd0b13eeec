// docs/examples/openai-agents-agent.ts's agent graph on the kit, as its own harness module (a module's
// default export is the harness the host serves). Invariant: it is bench/lib/kit-weather.ts's triageKit.
import { triageKit } from "./kit-weather.js";

export default triageKit;
