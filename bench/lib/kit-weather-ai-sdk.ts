// docs/examples/ai-sdk-agent.ts's agent on the kit, as its own harness module (a module's default export
// is the harness the host serves). Invariant: it is bench/lib/kit-weather.ts's weatherKit.
import { weatherKit } from "./kit-weather.js";

export default weatherKit;
