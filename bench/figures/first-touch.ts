// A session's first touch after a host opens (issue 41; docs/protocol.md §5.9), two figures:
// - first_touch_1k_ratio: the first echo turn after Host.open on a 1,000-turn session (5,000 events) over
//   the same on a 10-turn session (50 events), one journal, the two alternating, a fresh host each time;
// - first_touch_1m_ms: the first echo turn after Host.open on a 1,000,000-event session (ms; Host.open
//   itself in details). It was `cold_resume_1m_ms` (open + first turn, ~32 s) before verified positions.
// Each session is built by the journal's own appendBatch (bench/lib/long-build.ts) and ends with a
// compaction record of all but its newest five events, so a stateless turn's Start.history is a few
// events on both (the history window is the stateless contract's, not the host's: uncompacted, a turn
// on a 1,000-turn session must carry 5,000 events); then one turn through a host — as a session that
// grew by turns — before the host closes. Invariant: only the sessions' lengths differ between the two
// sides of the ratio; each timed turn is the first operation of a freshly opened host on its session.
import { openEchoHost } from "../lib/echo-host.js";
import { appendCompactionTurn, buildLongSession } from "../lib/long-build.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { echoTurn } from "./million-events.js";

/** Builds `events` echo events plus a compaction turn in a new session, then runs one turn on it. */
async function grown(dir: string, db: string, events: readonly number[]): Promise<string[]> {
  const builder = await openEchoHost(dir, "local", db);
  const uids: string[] = [];
  try {
    for (const n of events) {
      const uid = await builder.newSession();
      await buildLongSession(builder.journal, uid, n);
      await appendCompactionTurn(builder.journal, uid);
      uids.push(uid);
    }
  } finally {
    await builder.close();
  }
  const host = await openEchoHost(dir, "local", db);
  try {
    for (const uid of uids) await host.turn(uid, "grown");
  } finally {
    await host.close();
  }
  return uids;
}

/** Opens a fresh host on the journal and times its first turn on `session` (and its open). */
async function firstTouch(
  dir: string,
  db: string,
  session: string,
  i: number,
): Promise<{ ms: number; openMs: number }> {
  const o0 = performance.now();
  const host = await openEchoHost(dir, "local", db);
  const openMs = performance.now() - o0;
  try {
    return { ms: (await echoTurn(host, session, i)).ms, openMs };
  } finally {
    await host.close();
  }
}

export const firstTouchRatio: Figure = {
  key: "first_touch_1k_ratio",
  title: "first turn after a host opens: 1,000-turn session vs 10-turn session",
  timeoutMs: { quick: 60_000, full: 600_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    const rounds = opts.quick ? 2 : 7;
    const longEvents = 5_000;
    const shortEvents = 50;
    const dir = scratchDir("first-touch");
    const db = dir.file("journal.db");
    try {
      const [long, short] = await grown(dir.path, db, [longEvents, shortEvents]);
      const longMs: number[] = [];
      const shortMs: number[] = [];
      for (let i = 0; i < rounds; i++) {
        // Alternating which goes first, so a drift in the machine's load falls on both sides.
        for (const session of i % 2 === 0 ? [long!, short!] : [short!, long!])
          (session === long ? longMs : shortMs).push((await firstTouch(dir.path, db, session, i)).ms);
      }
      const ratio = median(longMs) / median(shortMs);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(longMs.map(round), "ms"),
        baseline: {
          ...sampleOf(shortMs.map(round), "ms"),
          what: `first turn after open, ${shortEvents / 5}-turn session`,
        },
        ratio: round(ratio),
        target: { op: "<=", value: 1.5 },
        details: {
          longEvents,
          shortEvents,
          rounds,
          history: "compacted: Start.history is the newest 5 events plus the turn on both sessions",
          longMs: longMs.map(round).join(" / "),
          shortMs: shortMs.map(round).join(" / "),
        },
      };
    } finally {
      dir.dispose();
    }
  },
};

export const firstTouchMillion: Figure = {
  key: "first_touch_1m_ms",
  title: "first turn after a host opens on a 1,000,000-event session",
  timeoutMs: { quick: 120_000, full: 1_800_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    const events = opts.quick ? 20_000 : 1_000_000;
    const rounds = Number(process.env["FIRST_TOUCH_1M_ROUNDS"] ?? 3);
    const dir = scratchDir("first-touch-1m");
    const db = dir.file("journal.db");
    try {
      const b0 = performance.now();
      const [session] = await grown(dir.path, db, [events]);
      const buildS = (performance.now() - b0) / 1000;
      const ms: number[] = [];
      const openMs: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const t = await firstTouch(dir.path, db, session!, i);
        ms.push(t.ms);
        openMs.push(t.openMs);
      }
      return {
        status: "ok",
        value: round(median(ms)),
        unit: "ms",
        measured: sampleOf(ms.map(round), "ms"),
        target: { op: "<=", value: 1_000 },
        details: {
          events,
          rounds,
          buildS: round(buildS),
          firstTurnMs: ms.map(round).join(" / "),
          hostOpenMs: openMs.map(round).join(" / "),
          history: "compacted: Start.history is the newest 5 events plus the turn",
        },
      };
    } finally {
      dir.dispose();
    }
  },
};
