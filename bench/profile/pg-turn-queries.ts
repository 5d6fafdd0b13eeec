// Counts the PostgreSQL statements one echo turn makes (in-process host, Placer.exec, local echo harness)
// and prints them with their wall time: `npx tsx bench/profile/pg-turn-queries.ts [turns]`. Each
// statement is a round trip to the server; on a loaded machine each costs a scheduling hop.
import pg from "pg";
import { openEchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { dropPgSchema, freshPgSchema, pgJournalUrl } from "../lib/pg.js";
import { scratchDir } from "../lib/tmp.js";

const turns = Number(process.argv[2] ?? 20);
const seen = new Map<string, { n: number; ms: number }>();
let counting = false;
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const text = typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "?");
  const key = text.replace(/\s+/g, " ").slice(0, 90);
  const t0 = performance.now();
  const note = () => {
    if (!counting) return;
    const e = seen.get(key) ?? { n: 0, ms: 0 };
    e.n += 1;
    e.ms += performance.now() - t0;
    seen.set(key, e);
  };
  const last = args[args.length - 1];
  if (typeof last === "function") {
    // Pool.query hands the client a callback instead of awaiting a promise.
    args[args.length - 1] = (...cbArgs: unknown[]) => {
      note();
      return (last as (...a: unknown[]) => unknown)(...cbArgs);
    };
  }
  const out = original.apply(this, args);
  if (out instanceof Promise) void out.finally(note);
  return out;
};

const schema = freshPgSchema("q");
const dir = scratchDir("pgq");
const host = await openEchoHost(dir.path, "local", pgJournalUrl(schema));
try {
  const session = await host.newSession();
  for (let i = 0; i < 5; i++) await host.turn(session, promptText(i, 80));
  counting = true;
  const t0 = performance.now();
  for (let i = 0; i < turns; i++) await host.turn(session, promptText(100 + i, 80));
  const wall = (performance.now() - t0) / turns;
  counting = false;
  let total = 0;
  let totalMs = 0;
  for (const [q, e] of [...seen].sort((a, b) => b[1].ms - a[1].ms)) {
    total += e.n;
    totalMs += e.ms;
    process.stdout.write(`${(e.n / turns).toFixed(2)}/turn  ${(e.ms / e.n).toFixed(2)} ms  ${q}\n`);
  }
  process.stdout.write(
    `${(total / turns).toFixed(1)} statements per turn, ${(totalMs / turns).toFixed(1)} ms of statement time, turn ${wall.toFixed(1)} ms\n`,
  );
} finally {
  await host.close();
  await dropPgSchema(schema);
  dir.dispose();
}
