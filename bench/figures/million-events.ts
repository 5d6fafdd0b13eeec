// The million-event session (issue 23 item 2), four keys from one built session:
// - long_session_1m_ratio: p50 of an echo turn through placement (in-process Host → Placer → echo on
//   the local runtime → SQLite on disk) on a session with 1,000,000 prior events over the p50 on a
//   session with 10, turns alternating between the two sessions of one journal (as long_session_ratio,
//   which stays the 10,000-event figure with the harness in a spawned node);
// - cold_resume_1m_ms: a fresh Host.open on that journal plus the first turn of the 1M-event session;
// - verify_1m_peak_rss_mib / export_1m_peak_rss_mib: the peak RSS (VmHWM) of a child process running
//   `harnesshost verify` / `harnesshost export --out` on the 1M-event session; details hold the same
//   commands' peaks on the 10-event session, so constant memory reads as equal peaks;
// - long_session_1m_compacted_ratio: after those turns, a compaction record of all but the newest events is
//   appended to the long session (bench/lib/long-build.ts appendCompactionTurn), so a stateless turn's
//   Start.history is a few events (§16); then the same alternating turns. The uncompacted ratio is bound
//   by the stateless contract (its history is the whole session); this one shows what the host adds;
// (storage_per_turn_ratio, once measured here over 12 turns, is bench/figures/storage-per-turn.ts.)
// The long session is built by buildLongSession (the journal's own appendBatch, 5,000 events per
// transaction), not by a million turns. Invariant: both sessions live in one journal and their turns
// alternate, so only their length differs.
import { openEchoHost, type EchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { appendCompactionTurn, buildLongSession } from "../lib/long-build.js";
import { peakRssOf } from "../lib/peak-rss.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import type { JournalRecord } from "../../src/journal/types.js";

export async function echoTurn(
  host: EchoHost,
  session: string,
  i: number,
): Promise<{ ms: number; records: readonly JournalRecord[] }> {
  const text = promptText(i);
  const t0 = performance.now();
  const result = await host.turn(session, text);
  const ms = performance.now() - t0;
  if (result.outputs[0] !== `echo:${text}`) throw new Error(`echo turn answered ${JSON.stringify(result.outputs[0])}`);
  return { ms, records: result.records };
}

export const millionEvents: Figure = {
  key: "long_session_1m_ratio",
  extraKeys: [
    "cold_resume_1m_ms",
    "verify_1m_peak_rss_mib",
    "export_1m_peak_rss_mib",
    "long_session_1m_compacted_ratio",
  ],
  title: "turn cost at 1,000,000 prior events vs at 10 (harness in process); cold resume, verify, export",
  timeoutMs: { quick: 120_000, full: 3_600_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    const longEvents = opts.quick ? 1_000 : 1_000_000;
    const shortEvents = 10;
    const warmup = 1;
    const turns = opts.quick ? 3 : 5;
    const dir = scratchDir("million");
    const dbPath = dir.file("journal.db");
    try {
      const t0 = performance.now();
      const builder = await openEchoHost(dir.path, "local", dbPath);
      let short: string;
      let long: string;
      try {
        short = await builder.newSession();
        await buildLongSession(builder.journal, short, shortEvents);
        long = await builder.newSession();
        await buildLongSession(builder.journal, long, longEvents);
      } finally {
        await builder.close();
      }
      const buildMs = performance.now() - t0;

      const c0 = performance.now();
      const host = await openEchoHost(dir.path, "local", dbPath);
      const shortMs: number[] = [];
      const longMs: number[] = [];
      const compacted = { short: [] as number[], long: [] as number[] };
      let coldMs: number;
      const alternate = async (i: number, into: { short: number[]; long: number[] }): Promise<void> => {
        const order: [string, number[]][] =
          i % 2 === 0
            ? [
                [short, into.short],
                [long, into.long],
              ]
            : [
                [long, into.long],
                [short, into.short],
              ];
        for (const [session, samples] of order) {
          const t = await echoTurn(host, session, i);
          if (i > warmup) samples.push(t.ms);
        }
      };
      try {
        await echoTurn(host, long, 0);
        coldMs = performance.now() - c0;
        for (let i = 1; i <= warmup + turns; i++) await alternate(i, { short: shortMs, long: longMs });
        await appendCompactionTurn(host.journal, long);
        for (let i = 1; i <= warmup + turns; i++) await alternate(i, compacted);
      } finally {
        await host.close();
      }

      const out = dir.file("export.jsonl");
      const verifyLong = await peakRssOf(["verify", "--journal", dbPath, "--session", long]);
      const verifyShort = await peakRssOf(["verify", "--journal", dbPath, "--session", short]);
      const exportLong = await peakRssOf(["export", "--journal", dbPath, "--session", long, "--out", out]);
      const exportShort = await peakRssOf(["export", "--journal", dbPath, "--session", short, "--out", out]);

      const ratio = median(longMs) / median(shortMs);
      const compactedRatio = median(compacted.long) / median(compacted.short);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(longMs.map(round), "ms", true),
        baseline: {
          ...sampleOf(shortMs.map(round), "ms", true),
          what: `p50 echo turn at ${shortEvents} prior events`,
        },
        ratio: round(ratio),
        target: { op: "<=", value: 1.5 },
        details: {
          priorEventsLong: longEvents,
          priorEventsShort: shortEvents,
          turnsEach: turns,
          warmupTurns: warmup,
          harness: "echo on the local runtime (in process)",
          buildS: round(buildMs / 1000),
          longTurnsMs: longMs.map(round).join(" / "),
        },
        also: {
          long_session_1m_compacted_ratio: {
            value: round(compactedRatio),
            unit: "×",
            measured: sampleOf(compacted.long.map(round), "ms", true),
            baseline: {
              ...sampleOf(compacted.short.map(round), "ms", true),
              what: `p50 echo turn at ${shortEvents} prior events`,
            },
            ratio: round(compactedRatio),
            target: { op: "<=", value: 1.5 },
            details: {
              what: `echo turns on the ${longEvents}-event session after a compaction record of all but its newest 5 events (Start.history ~10 events)`,
              turnsEach: turns,
              warmupTurns: warmup,
            },
          },
          cold_resume_1m_ms: {
            value: round(coldMs),
            unit: "ms",
            details: { what: `Host.open + first echo turn of the ${longEvents}-event session (page cache warm)` },
          },
          verify_1m_peak_rss_mib: {
            value: round(verifyLong.mib),
            unit: "MiB",
            details: {
              command: "harnesshost verify --journal DB --session UID (child process, VmHWM)",
              shortSessionPeakMib: round(verifyShort.mib),
              wallS: round(verifyLong.ms / 1000),
            },
          },
          export_1m_peak_rss_mib: {
            value: round(exportLong.mib),
            unit: "MiB",
            details: {
              command: "harnesshost export --journal DB --session UID --out FILE (child process, VmHWM)",
              shortSessionPeakMib: round(exportShort.mib),
              wallS: round(exportLong.ms / 1000),
            },
          },
        },
      };
    } finally {
      dir.dispose();
    }
  },
};
