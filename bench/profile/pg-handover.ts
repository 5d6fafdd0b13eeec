// What moving a session between hosts costs on PostgreSQL: two journals on one schema ("hosts" A and
// B) take one session's lock in turn, each taking it over from the other, and the time of each
// tryLockSession is recorded — with leases (the other host holds a parked lease and is asked for it)
// and without (the other host unlocked when its operation ended), alternating blocks, in one process:
// `npx tsx bench/profile/pg-handover.ts [hops=200]`. Also the same host taking up its own lease again.
// Invariant: every schema it makes is dropped in `finally`; a refused handover fails the run.
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { dropPgSchema, freshPgSchema, pgJournalUrl } from "../lib/pg.js";
import { median, percentile } from "../lib/stats.js";

const hops = Number(process.argv[2] ?? 200);
const modes = { leases: 60_000, "no leases": 0 } as const;
const schemas: string[] = [];
const journals: PostgresJournal[] = [];
try {
  const pairs = new Map<string, [PostgresJournal, PostgresJournal]>();
  for (const [mode, leaseMs] of Object.entries(modes)) {
    const schema = freshPgSchema("handover");
    schemas.push(schema);
    const a = await PostgresJournal.open(pgJournalUrl(schema), { sessionLeaseMs: leaseMs });
    const b = await PostgresJournal.open(pgJournalUrl(schema), { sessionLeaseMs: leaseMs });
    journals.push(a, b);
    pairs.set(mode, [a, b]);
  }
  const took = new Map<string, number[]>([...pairs.keys(), "same host, leased"].map((k) => [k, []]));
  const lockOnce = async (journal: PostgresJournal, into: number[]): Promise<void> => {
    const t0 = performance.now();
    const release = await journal.tryLockSession("s");
    into.push(performance.now() - t0);
    if (release === undefined) throw new Error("a handover was refused");
    await release();
  };
  for (let block = 0; block < hops / 10; block++) {
    for (const [mode, [a, b]] of pairs) {
      for (let i = 0; i < 10; i++) await lockOnce(i % 2 === 0 ? a : b, took.get(mode)!);
    }
    const [a] = pairs.get("leases")!;
    for (let i = 0; i < 10; i++) await lockOnce(a, took.get("same host, leased")!);
  }
  for (const [mode, ms] of took) {
    const steady = ms.slice(10);
    process.stdout.write(
      `${mode.padEnd(18)} tryLockSession p50 ${median(steady).toFixed(3)} ms, p99 ${percentile(steady, 99).toFixed(3)} ms (${steady.length})\n`,
    );
  }
} finally {
  for (const j of journals) await j.close().catch(() => undefined);
  for (const s of schemas) await dropPgSchema(s);
}
