// The million-event session (issue 23 item 2), five keys from one built session:
// - long_session_1m_ratio: p50 of an echo turn through placement (in-process Host → Placer → echo on
//   the local runtime → SQLite on disk) on a session with 1,000,000 prior events over the p50 on a
//   session with 10, turns alternating between the two sessions of one journal (as long_session_ratio,
//   which stays the 10,000-event figure with the harness in a spawned node);
// - cold_resume_1m_ms: a fresh Host.open on that journal plus the first turn of the 1M-event session;
// - verify_1m_peak_rss_mib / export_1m_peak_rss_mib: the peak RSS (VmHWM) of a child process running
//   `harnesshost verify` / `harnesshost export --out` on the 1M-event session; details hold the same
//   commands' peaks on the 10-event session, so constant memory reads as equal peaks;
// - storage_per_turn_ratio: growth of the journal's used pages over the measured turns (both sessions)
//   divided by the record bytes those turns added (encoded event + both hashes + session uid + seq and
//   fence): what the file pays per byte a turn must keep.
// The long session is built by buildLongSession (the journal's own appendBatch, 5,000 events per
// transaction), not by a million turns. Invariant: both sessions live in one journal and their turns
// alternate, so only their length differs.
import Database from "better-sqlite3";
import { openEchoHost, type EchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { buildLongSession } from "../lib/long-build.js";
import { peakRssOf } from "../lib/peak-rss.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { eventBytes } from "../../src/wire/event-bytes.js";
import type { JournalRecord } from "../../src/journal/types.js";

/** Bytes of the journal's pages in use (page_count − freelist_count), read through the WAL. */
function usedBytes(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true }) as number;
    const free = db.pragma("freelist_count", { simple: true }) as number;
    const size = db.pragma("page_size", { simple: true }) as number;
    return (pages - free) * size;
  } finally {
    db.close();
  }
}

function recordBytes(records: readonly JournalRecord[], session: string): { record: number; event: number } {
  let record = 0;
  let event = 0;
  for (const r of records) {
    const e = eventBytes(r.event);
    event += e;
    record += e + r.prevHash.length + r.contentHash.length + session.length + 16;
  }
  return { record, event };
}

async function echoTurn(
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
  extraKeys: ["cold_resume_1m_ms", "verify_1m_peak_rss_mib", "export_1m_peak_rss_mib", "storage_per_turn_ratio"],
  title: "turn cost at 1,000,000 prior events vs at 10 (harness in process); cold resume, verify, export, storage",
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
      let coldMs: number;
      let before: number;
      let grown: number;
      const added = { record: 0, event: 0 };
      try {
        await echoTurn(host, long, 0);
        coldMs = performance.now() - c0;
        before = usedBytes(dbPath);
        for (let i = 1; i <= warmup + turns; i++) {
          const order: [string, number[]][] =
            i % 2 === 0
              ? [
                  [short, shortMs],
                  [long, longMs],
                ]
              : [
                  [long, longMs],
                  [short, shortMs],
                ];
          for (const [session, into] of order) {
            const t = await echoTurn(host, session, i);
            const b = recordBytes(t.records, session);
            added.record += b.record;
            added.event += b.event;
            if (i > warmup) into.push(t.ms);
          }
        }
        grown = usedBytes(dbPath) - before;
      } finally {
        await host.close();
      }

      const out = dir.file("export.jsonl");
      const verifyLong = await peakRssOf(["verify", "--journal", dbPath, "--session", long]);
      const verifyShort = await peakRssOf(["verify", "--journal", dbPath, "--session", short]);
      const exportLong = await peakRssOf(["export", "--journal", dbPath, "--session", long, "--out", out]);
      const exportShort = await peakRssOf(["export", "--journal", dbPath, "--session", short, "--out", out]);

      const ratio = median(longMs) / median(shortMs);
      const storage = grown / added.record;
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
          storage_per_turn_ratio: {
            value: round(storage),
            unit: "×",
            target: { op: "<=", value: 1.2 },
            details: {
              turns: 2 * (warmup + turns),
              usedBytesGrowth: grown,
              recordBytesAdded: added.record,
              eventBytesAdded: added.event,
              overEventBytes: round(grown / added.event),
              measure: "(page_count − freelist_count) × page_size before and after the turns",
            },
          },
        },
      };
    } finally {
      dir.dispose();
    }
  },
};
