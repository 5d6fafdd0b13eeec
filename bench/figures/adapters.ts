// ai_sdk_turn_ratio, openai_agents_turn_ratio: wall time of one turn of each framework adapter's example
// agent hosted by harnesshost (SQLite journal, the harness on the local runtime, the host's model the
// framework's mock), over the same agent called directly with the same mock model and no host. The
// question and the mock's answers are the same on both sides (a tool call, its result, an answer), so
// only the hosting differs: the journal's commits, the sink, the kit's rebuild of the conversation.
// The value pairs like with like: the direct call carries no conversation and never compacts, so the
// hosted example runs in sessions of SESSION_TURNS turns (a question and a follow-up), too short for
// its compaction to start, and every pair's model calls are counted on both sides — a pair whose counts
// differ fails the figure (the sides did unequal work). One long session of the example as configured,
// compacting every few turns, is measured too and reported in the details (`compacting*`) with its
// model calls per turn.
// The details split the cost: the same agent written natively on the agent kit (bench/lib/kit-weather.ts)
// on the same host and model — the same records per turn — is what hosting costs with no framework and
// no adapter, so adapter turn ÷ kit turn is the adapter's (and its framework's) own share; a host with
// its journal in RAM shows what the durable commits cost.
// A mock answers in microseconds, which no model a user hosts does: the figure's value is measured with
// the same mock made to answer each call after PROVIDER_LATENCY_MS on both sides (hosted and direct), so
// the ratio says what hosting adds to a turn whose model calls take time at all; the same pairing with
// the mock answering at once is kept whole in the details (zeroLatencyRatio, hostingMsPerTurn: the
// absolute cost of hosting one turn, which no model latency changes).
// Invariants: the sides compared alternate turn by turn (paired), after warmup; the value's pairs (and
// the zero-latency and RAM-journal ones) make the same number of model calls on both sides.
import "../lib/src-entry-points.js";
import type { Model, ModelProvider as AgentsModelProvider } from "@openai/agents";
import { MockLanguageModelV3 } from "ai/test";
import { aiSdkModelProvider } from "../../src/adapters/ai-sdk/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { MemoryJournal } from "../../src/journal/index.js";
import type { ModelProvider } from "../../src/model/types.js";
import { median, type PairedRuns, paired, round, sampleOf, timeMs } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

/**
 * How long the mock takes to answer each model call in the figure's value, ms: 50, well under any
 * hosted model's round trip (a provider's first token takes from about a hundred milliseconds to
 * seconds), so the ratio is an upper bound on what hosting adds to a real agent's turn.
 */
export const PROVIDER_LATENCY_MS = 50;

/**
 * Turns per hosted session in the pairings with the direct call: 2, a question and a follow-up — the
 * examples compact once a conversation passes 12 messages, which takes three turns.
 */
export const SESSION_TURNS = 2;

interface Side {
  readonly harness: string;
  /** The docs example as configured (it compacts every few turns of a long session). */
  readonly file: string;
  /** The same agent on the agent kit. */
  readonly kitFile: string;
  /** The host's model and the direct call, with the mock answering after `latencyMs` (0: at once). */
  readonly at: (latencyMs: number) => {
    readonly provider: ModelProvider;
    readonly direct: (question: string) => Promise<unknown>;
    /** Model calls made so far by the host's model and by the direct call. */
    readonly calls: { readonly hosted: () => number; readonly direct: () => number };
  };
}

/** `answer()`, called `ms` after now: the mock's answer arriving after a provider's round trip. */
async function after<T>(ms: number, answer: () => PromiseLike<T>): Promise<T> {
  await new Promise<void>((resolve) => setTimeout(resolve, ms));
  return answer();
}

/** The docs examples, imported once the package's entry points resolve to this tree's sources. */
const aiSdkExample = () => import("../../docs/examples/ai-sdk-agent.js");
const agentsExample = () => import("../../docs/examples/openai-agents-agent.js");

interface CountedRuns extends PairedRuns {
  /** Model calls of each recorded pair's subject and baseline, warmup included, in order. */
  readonly subjectCalls: number[];
  readonly baselineCalls: number[];
}

/** `paired`, counting the model calls each side makes in each repetition. */
async function pairedCounted(
  reps: number,
  warmup: number,
  subject: (i: number) => Promise<number>,
  baseline: (i: number) => Promise<number>,
  calls: { readonly hosted: () => number; readonly direct: () => number },
): Promise<CountedRuns> {
  const subjectCalls: number[] = [];
  const baselineCalls: number[] = [];
  const counting =
    (fn: (i: number) => Promise<number>, count: () => number, into: number[]) =>
    async (i: number): Promise<number> => {
      const before = count();
      const ms = await fn(i);
      into[i] = count() - before;
      return ms;
    };
  const runs = await paired(
    reps,
    warmup,
    counting(subject, calls.hosted, subjectCalls),
    counting(baseline, calls.direct, baselineCalls),
  );
  return { ...runs, subjectCalls, baselineCalls };
}

/** Throws when a pair's sides made different numbers of model calls: a bench defect, not a figure. */
function likeForLike(key: string, what: string, runs: CountedRuns): void {
  runs.subjectCalls.forEach((calls, i) => {
    if (calls !== runs.baselineCalls[i] || calls === 0)
      throw new Error(
        `${key} (${what}): turn pair ${i} made ${calls} model calls hosted and ${runs.baselineCalls[i]} direct — the sides did unequal work`,
      );
  });
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function figure(key: string, title: string, side: () => Promise<Side>): Figure {
  return {
    key,
    title,
    async run(opts: RunOptions): Promise<FigureResult> {
      const s = await side();
      const now = s.at(0);
      const slow = s.at(PROVIDER_LATENCY_MS);
      const dir = scratchDir(key);
      const slowDir = scratchDir(`${key}-latency`);
      const open = (dataDir: string, model: ModelProvider, journal?: MemoryJournal) =>
        Host.open(
          {
            dataDir,
            harnesses: [
              { name: s.harness, runtime: "local", target: s.file },
              { name: "kit", runtime: "local", target: s.kitFile },
            ],
          },
          { model, ...(journal ? { journal } : {}) },
        );
      const host = await open(dir.path, now.provider);
      // The same turns on a host whose journal is in RAM: what the adapter and the host cost without
      // the durable commits (a detail; the figure is the durable host's).
      const ramHost = await open(dir.path, now.provider, new MemoryJournal());
      const slowHost = await open(slowDir.path, slow.provider);
      try {
        const signal = new AbortController().signal;
        const reps = opts.quick ? 6 : 60;
        const warmup = opts.quick ? 2 : 10;
        /** Sessions of SESSION_TURNS turns each, made beforehand: turn i goes to `at(i)`. */
        const sessions = async (h: Host, turns: number) => {
          const uids: string[] = [];
          for (let i = 0; i < Math.ceil(turns / SESSION_TURNS); i++)
            uids.push((await h.createSession({ harness: s.harness })).uid);
          return (i: number) => uids[Math.floor(i / SESSION_TURNS)]!;
        };
        const turn = (h: Host, session: string, i: number) =>
          timeMs(async () => {
            const r = await h.placer.exec({ session, inputs: [textMessage("user", `weather in City${i}?`)], signal });
            if (!r.outputs.at(-1)?.includes(`City${i}`)) throw new Error(`${key} answered ${r.outputs.at(-1)}`);
          });
        const direct = (i: number) => timeMs(() => now.direct(`weather in City${i}?`));
        const slowDirect = (i: number) => timeMs(() => slow.direct(`weather in City${i}?`));
        // The model's latency dominates both sides here, so fewer turns give as steady a median.
        const slowAt = await sessions(slowHost, (reps + warmup) / 2);
        const runs = await pairedCounted(
          reps / 2,
          warmup / 2,
          (i) => turn(slowHost, slowAt(i), i),
          slowDirect,
          slow.calls,
        );
        likeForLike(key, "the value", runs);
        // One long session of the example as configured: its compactions' model calls have no
        // counterpart in the direct call (reported, not asserted).
        const { uid: longUid } = await slowHost.createSession({ harness: s.harness });
        const compacting = await pairedCounted(
          reps / 2,
          warmup / 2,
          (i) => turn(slowHost, longUid, i),
          slowDirect,
          slow.calls,
        );
        const instantAt = await sessions(host, reps + warmup);
        const instant = await pairedCounted(reps, warmup, (i) => turn(host, instantAt(i), i), direct, now.calls);
        likeForLike(key, "zero latency", instant);
        const ramAt = await sessions(ramHost, reps + warmup);
        const ram = await pairedCounted(reps, warmup, (i) => turn(ramHost, ramAt(i), i), direct, now.calls);
        likeForLike(key, "RAM journal", ram);
        // Adapter and kit agents in one long session each, both compacting as the example does: the
        // same work on both sides.
        const { uid } = await host.createSession({ harness: s.harness });
        const { uid: kitUid } = await host.createSession({ harness: "kit" });
        const kit = await paired(
          reps,
          warmup,
          (i) => turn(host, uid, i),
          (i) => turn(host, kitUid, i),
        );
        const ratio = median(runs.subject) / median(runs.baseline);
        return {
          status: "ok",
          value: round(ratio),
          unit: "×",
          measured: sampleOf(runs.subject.map(round), "ms", true),
          baseline: {
            ...sampleOf(runs.baseline.map(round), "ms", true),
            what: `the same agent called directly, same mock model answering after ${PROVIDER_LATENCY_MS} ms`,
          },
          ratio: round(ratio),
          target: { op: "<=", value: 1.3 },
          details: {
            turns: reps / 2,
            journal: "sqlite",
            providerLatencyMs: PROVIDER_LATENCY_MS,
            sessionTurns: SESSION_TURNS,
            modelCallsPerTurn: round(mean(runs.subjectCalls)),
            pairedMedianRatio: round(median(runs.ratios)),
            compactingTurns: reps / 2,
            compactingRatio: round(median(compacting.subject) / median(compacting.baseline)),
            compactingTurnMs: round(median(compacting.subject)),
            compactingModelCallsPerTurn: round(mean(compacting.subjectCalls.slice(warmup / 2))),
            compactingDirectModelCallsPerTurn: round(mean(compacting.baselineCalls.slice(warmup / 2))),
            zeroLatencyTurns: reps,
            zeroLatencyRatio: round(median(instant.subject) / median(instant.baseline)),
            zeroLatencyTurnMs: round(median(instant.subject)),
            zeroLatencyDirectMs: round(median(instant.baseline)),
            hostingMsPerTurn: round(median(instant.subject) - median(instant.baseline)),
            ramJournalTurnMs: round(median(ram.subject)),
            ramJournalRatio: round(median(ram.subject) / median(ram.baseline)),
            kitTurnMs: round(median(kit.baseline)),
            overKitRatio: round(median(kit.subject) / median(kit.baseline)),
          },
        };
      } finally {
        await slowHost.close();
        await ramHost.close();
        await host.close();
        dir.dispose();
        slowDir.dispose();
      }
    },
  };
}

const AI_SDK_FILE = new URL("../../docs/examples/ai-sdk-agent.ts", import.meta.url).pathname;
const AGENTS_FILE = new URL("../../docs/examples/openai-agents-agent.ts", import.meta.url).pathname;

export const aiSdkTurn = figure("ai_sdk_turn_ratio", "AI SDK agent turn hosted vs called directly", async () => {
  const aiSdk = await aiSdkExample();
  /** The example's mock, answering each call after `ms`, and how many calls it was made so far. */
  const mock = (ms: number) => {
    const inner = aiSdk.mockModel();
    const calls = () => inner.doGenerateCalls.length + inner.doStreamCalls.length;
    if (ms === 0) return { model: inner, calls };
    const model = new MockLanguageModelV3({
      modelId: inner.modelId,
      doGenerate: (options) => after(ms, () => inner.doGenerate(options)),
      doStream: (options) => after(ms, () => inner.doStream(options)),
    });
    return { model, calls };
  };
  return {
    harness: "weather",
    file: AI_SDK_FILE,
    kitFile: new URL("../lib/kit-weather-ai-sdk.ts", import.meta.url).pathname,
    at: (ms) => {
      const direct = mock(ms);
      const hosted = mock(ms);
      return {
        provider: aiSdkModelProvider(hosted.model),
        direct: (question) => aiSdk.ask(direct.model, question),
        calls: { hosted: hosted.calls, direct: direct.calls },
      };
    },
  };
});

export const openAIAgentsTurn = figure(
  "openai_agents_turn_ratio",
  "OpenAI Agents SDK turn hosted vs run directly",
  async () => {
    const agents = await agentsExample();
    /** The example's host model, answering each call after `ms`, and how many calls it was made so far. */
    const hostMock = (ms: number): { provider: ModelProvider; calls: () => number } => {
      const inner = agents.mockModel();
      const calls = () => inner.calls;
      if (ms === 0) return { provider: inner, calls };
      return { provider: { name: inner.name, invoke: (r, o) => after(ms, () => inner.invoke(r, o)) }, calls };
    };
    /** The example's direct model (the same scripted answers), answering each call after `ms`. */
    const directMock = (ms: number): { provider: AgentsModelProvider; calls: () => number } => {
      const inner = agents.directModel();
      if (ms === 0) return { provider: inner, calls: inner.calls };
      return {
        provider: {
          getModel: (name) => {
            const m = inner.getModel(name) as Model;
            return { ...m, getResponse: (request) => after(ms, () => m.getResponse(request)) };
          },
        },
        calls: inner.calls,
      };
    };
    return {
      harness: "agents",
      file: AGENTS_FILE,
      kitFile: new URL("../lib/kit-weather-openai-agents.ts", import.meta.url).pathname,
      at: (ms) => {
        const direct = directMock(ms);
        const hosted = hostMock(ms);
        return {
          provider: hosted.provider,
          direct: (question) => agents.ask(question, direct.provider),
          calls: { hosted: hosted.calls, direct: direct.calls },
        };
      },
    };
  },
);
