// Per-append CPU cost of the metered journal (src/host/metered-journal.ts) with no disk in the way:
// MemoryJournal.append bare, metered (tracing off), and metered with tracing on inside a recording span
// (every append records its commit span into an in-memory exporter, batched as OTLP export is), alternating blocks; prints the
// median CPU µs (process.cpuUsage: less disturbed by other processes than wall time) per append of each and the added µs. The SQLite figure (obs_*_append_ratio) adds an fsync
// per append, which on a loaded machine swamps these microseconds.
// Run: npx tsx bench/profile/obs-append-micro.ts [appendsPerBlock] [blocks]
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { meteredJournal } from "../../src/host/metered-journal.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { flushTracing, pauseTracing, startTracing, stopTracing } from "../../src/obs/trace.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { created } from "../../test/journal/sessions.js";

const perBlock = Number(process.argv[2] ?? 500);
const blocks = Number(process.argv[3] ?? 15);
const events = echoEventStream(perBlock);
let sessionNo = 0;

async function block(journal: Journal): Promise<number> {
  const session = `s${++sessionNo}`;
  await created(journal, session);
  const fence = await journal.newFence(session);
  const c0 = process.cpuUsage();
  for (let i = 0; i < events.length; i++) await journal.append(session, i, fence, events[i]!);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / events.length;
}

const exporter = new InMemorySpanExporter();
const bare = new MemoryJournal();
const metered = meteredJournal(new MemoryJournal(), new HostMetrics());
const t: Record<"bare" | "metered" | "bare2" | "traced", number[]> = { bare: [], metered: [], bare2: [], traced: [] };
// Metrics alone, before the SDK is registered (its context manager taxes every promise once it is).
for (let b = 0; b < blocks + 2; b++) {
  const x = await block(bare);
  const y = await block(metered);
  if (b < 2) continue;
  t.bare.push(x);
  t.metered.push(y);
}
await startTracing({}, { exporter, batch: true });
for (let b = 0; b < blocks + 2; b++) {
  pauseTracing(true);
  const x = await block(bare);
  pauseTracing(false);
  const z = await trace.getTracer("bench").startActiveSpan("turn", async (span) => {
    const us = await block(metered);
    span.end();
    return us;
  });
  await flushTracing();
  if (exporter.getFinishedSpans().length !== perBlock + 1) throw new Error("expected one commit span per append");
  exporter.reset();
  if (b < 2) continue;
  t.bare2.push(x);
  t.traced.push(z);
}
await stopTracing();
const m = { bare: median(t.bare), metered: median(t.metered), bare2: median(t.bare2), traced: median(t.traced) };
const us = (v: number) => `${v.toFixed(2)} µs`;
console.log(`bare     ${us(m.bare)}/append`);
console.log(`metered  ${us(m.metered)}/append (+${us(m.metered - m.bare)})`);
console.log(`bare (SDK registered, paused) ${us(m.bare2)}/append`);
console.log(`traced   ${us(m.traced)}/append (+${us(m.traced - m.bare2)}, a commit span each)`);
