// ai_sdk_turn_ratio, openai_agents_turn_ratio: wall time of one turn of each framework adapter's example
// agent hosted by harnesshost (SQLite journal, the harness on the local runtime, the host's model the
// framework's mock), over the same agent called directly with the same mock model and no host. The
// question and the mock's answers are the same on both sides (a tool call, its result, an answer), so
// only the hosting differs: the journal's commits, the sink, the kit's rebuild of the conversation.
// The details split that: the same agent written natively on the agent kit (bench/lib/kit-weather.ts)
// on the same host and model — the same records per turn — is what hosting costs with no framework and
// no adapter, so adapter turn ÷ kit turn is the adapter's (and its framework's) own share; a host with
// its journal in RAM shows what the durable commits cost.
// Invariant: the sides compared alternate turn by turn (paired), after warmup.
import "../lib/src-entry-points.js";
import { aiSdkModelProvider } from "../../src/adapters/ai-sdk/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { MemoryJournal } from "../../src/journal/index.js";
import type { ModelProvider } from "../../src/model/types.js";
import { median, paired, round, sampleOf, timeMs } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

interface Side {
  readonly harness: string;
  readonly file: string;
  /** The same agent on the agent kit. */
  readonly kitFile: string;
  readonly provider: ModelProvider;
  readonly direct: (question: string) => Promise<unknown>;
}

/** The docs examples, imported once the package's entry points resolve to this tree's sources. */
const aiSdkExample = () => import("../../docs/examples/ai-sdk-agent.js");
const agentsExample = () => import("../../docs/examples/openai-agents-agent.js");

function figure(key: string, title: string, side: () => Promise<Side>): Figure {
  return {
    key,
    title,
    async run(opts: RunOptions): Promise<FigureResult> {
      const s = await side();
      const dir = scratchDir(key);
      const open = (journal?: MemoryJournal) =>
        Host.open(
          {
            dataDir: dir.path,
            harnesses: [
              { name: s.harness, runtime: "local", target: s.file },
              { name: "kit", runtime: "local", target: s.kitFile },
            ],
          },
          { model: s.provider, ...(journal ? { journal } : {}) },
        );
      const host = await open();
      // The same turns on a host whose journal is in RAM: what the adapter and the host cost without
      // the durable commits (a detail; the figure is the durable host's).
      const ramHost = await open(new MemoryJournal());
      try {
        const signal = new AbortController().signal;
        const { uid } = await host.createSession({ harness: s.harness });
        const { uid: ramUid } = await ramHost.createSession({ harness: s.harness });
        const { uid: kitUid } = await host.createSession({ harness: "kit" });
        const reps = opts.quick ? 6 : 60;
        const warmup = opts.quick ? 2 : 10;
        const turn = (h: Host, session: string, i: number) =>
          timeMs(async () => {
            const r = await h.placer.exec({ session, inputs: [textMessage("user", `weather in City${i}?`)], signal });
            if (!r.outputs.at(-1)?.includes(`City${i}`)) throw new Error(`${key} answered ${r.outputs.at(-1)}`);
          });
        const direct = (i: number) => timeMs(() => s.direct(`weather in City${i}?`));
        const runs = await paired(reps, warmup, (i) => turn(host, uid, i), direct);
        const ram = await paired(reps, warmup, (i) => turn(ramHost, ramUid, i), direct);
        const kit = await paired(
          reps,
          warmup,
          (i) => turn(host, uid, reps + warmup + i),
          (i) => turn(host, kitUid, reps + warmup + i),
        );
        const ratio = median(runs.subject) / median(runs.baseline);
        return {
          status: "ok",
          value: round(ratio),
          unit: "×",
          measured: sampleOf(runs.subject.map(round), "ms", true),
          baseline: {
            ...sampleOf(runs.baseline.map(round), "ms", true),
            what: "the same agent called directly, same mock model",
          },
          ratio: round(ratio),
          target: { op: "<=", value: 1.3 },
          details: {
            turns: reps,
            journal: "sqlite",
            pairedMedianRatio: round(median(runs.ratios)),
            ramJournalTurnMs: round(median(ram.subject)),
            ramJournalRatio: round(median(ram.subject) / median(ram.baseline)),
            kitTurnMs: round(median(kit.baseline)),
            overKitRatio: round(median(kit.subject) / median(kit.baseline)),
          },
        };
      } finally {
        await ramHost.close();
        await host.close();
        dir.dispose();
      }
    },
  };
}

const AI_SDK_FILE = new URL("../../docs/examples/ai-sdk-agent.ts", import.meta.url).pathname;
const AGENTS_FILE = new URL("../../docs/examples/openai-agents-agent.ts", import.meta.url).pathname;

export const aiSdkTurn = figure("ai_sdk_turn_ratio", "AI SDK agent turn hosted vs called directly", async () => {
  const aiSdk = await aiSdkExample();
  const direct = aiSdk.mockModel();
  return {
    harness: "weather",
    file: AI_SDK_FILE,
    kitFile: new URL("../lib/kit-weather-ai-sdk.ts", import.meta.url).pathname,
    provider: aiSdkModelProvider(aiSdk.mockModel()),
    direct: (question) => aiSdk.ask(direct, question),
  };
});

export const openAIAgentsTurn = figure(
  "openai_agents_turn_ratio",
  "OpenAI Agents SDK turn hosted vs run directly",
  async () => {
    const agents = await agentsExample();
    const direct = agents.directModel();
    return {
      harness: "agents",
      file: AGENTS_FILE,
      kitFile: new URL("../lib/kit-weather-openai-agents.ts", import.meta.url).pathname,
      provider: agents.mockModel(),
      direct: (question) => agents.ask(question, direct),
    };
  },
);
