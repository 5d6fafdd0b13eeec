// ai_sdk_turn_ratio, openai_agents_turn_ratio: wall time of one turn of each framework adapter's example
// agent hosted by harnesshost (SQLite journal, the harness on the local runtime, the host's model the
// framework's mock), over the same agent called directly with the same mock model and no host. The
// question and the mock's answers are the same on both sides (a tool call, its result, an answer), so
// only the hosting differs: the journal's commits, the sink, the kit's rebuild of the conversation.
// Invariant: the two sides alternate turn by turn (paired), after warmup.
import { aiSdkModelProvider } from "../../src/adapters/ai-sdk/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { MemoryJournal } from "../../src/journal/index.js";
import type { ModelProvider } from "../../src/model/types.js";
import * as aiSdk from "../../docs/examples/ai-sdk-agent.js";
import * as agents from "../../docs/examples/openai-agents-agent.js";
import { median, paired, round, sampleOf, timeMs } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

interface Side {
  readonly harness: string;
  readonly file: string;
  readonly provider: ModelProvider;
  readonly direct: (question: string) => Promise<unknown>;
}

function figure(key: string, title: string, side: () => Side): Figure {
  return {
    key,
    title,
    async run(opts: RunOptions): Promise<FigureResult> {
      const s = side();
      const dir = scratchDir(key);
      const open = (journal?: MemoryJournal) =>
        Host.open(
          { dataDir: dir.path, harnesses: [{ name: s.harness, runtime: "local", target: s.file }] },
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
        const reps = opts.quick ? 6 : 60;
        const warmup = opts.quick ? 2 : 10;
        const turn = (h: Host, session: string, i: number) =>
          timeMs(() => h.placer.exec({ session, inputs: [textMessage("user", `weather in City${i}?`)], signal }));
        const direct = (i: number) => timeMs(() => s.direct(`weather in City${i}?`));
        const runs = await paired(reps, warmup, (i) => turn(host, uid, i), direct);
        const ram = await paired(reps, warmup, (i) => turn(ramHost, ramUid, i), direct);
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

export const aiSdkTurn = figure("ai_sdk_turn_ratio", "AI SDK agent turn hosted vs called directly", () => {
  const direct = aiSdk.mockModel();
  return {
    harness: "weather",
    file: AI_SDK_FILE,
    provider: aiSdkModelProvider(aiSdk.mockModel()),
    direct: (question) => aiSdk.ask(direct, question),
  };
});

export const openAIAgentsTurn = figure(
  "openai_agents_turn_ratio",
  "OpenAI Agents SDK turn hosted vs run directly",
  () => {
    const direct = agents.directModel();
    return {
      harness: "agents",
      file: AGENTS_FILE,
      provider: agents.mockModel(),
      direct: (question) => agents.ask(question, direct),
    };
  },
);
