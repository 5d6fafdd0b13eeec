// A differential of one echo turn through serve + a spawned echo node against the contract floor
// (bench/lib/contract-turn-shape.ts), both in this process, in alternating blocks: per turn, the CPU of
// this process (client + host) and of each node process, and the write/read syscalls and bytes each
// process makes (/proc/PID/io: socket and journal I/O alike). Observes only; changes no behaviour.
// Run: npx tsx bench/profile/turn-diff.ts [turnsPerBlock] [blocks]
import { readFileSync } from "node:fs";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { startContractTurnShape } from "../lib/contract-turn-shape.js";
import { openServedEcho } from "../lib/served-echo.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const perBlock = Number(process.argv[2] ?? 50);
const blocks = Number(process.argv[3] ?? 6);
const TICK_US = 10_000; // USER_HZ 100

interface Sample {
  cpuUs: number;
  io: Record<string, number>;
}
function children(): number[] {
  const out: number[] = [];
  for (const task of readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/))
    if (task) out.push(Number(task));
  return out;
}
function sample(pid: number): Sample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const cpuUs = (Number(fields[11]) + Number(fields[12])) * TICK_US;
  const io: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n")) {
    const [k, v] = line.split(":");
    if (k && v) io[k] = Number(v);
  }
  return { cpuUs, io };
}
function diff(a: Sample, b: Sample, n: number): Record<string, number> {
  const out: Record<string, number> = { cpuUs: (b.cpuUs - a.cpuUs) / n };
  for (const k of ["syscr", "syscw", "rchar", "wchar"]) out[k] = ((b.io[k] ?? 0) - (a.io[k] ?? 0)) / n;
  return out;
}

const dir = scratchDir("turn-diff");
const served = await openServedEcho(dir, await openJournal(dir.file("journal.db")), 600_000);
const contractJournal = await openJournal(dir.file("contract.db"));
const contract = await startContractTurnShape(
  `unix://${dir.file("c.sock")}`,
  dir.file("cn.sock"),
  contractJournal,
  "sess-contract",
);
const contractPid = children()[0];
const client = served.client;
const real: Record<string, number[]> = {};
const floor: Record<string, number[]> = {};
const push = (to: Record<string, number[]>, d: Record<string, number>, prefix: string) => {
  for (const [k, v] of Object.entries(d)) {
    const key = `${prefix}.${k}`;
    to[key] = [...(to[key] ?? []), v];
  }
};
try {
  let session = await served.newSession();
  let i = 0;
  const realTurn = async () => {
    if (i % 70 === 0) session = await served.newSession();
    let ended = false;
    for await (const u of client.exec({ session, inputs: [textMessage("user", `hello ${i++}`)] }))
      if (u.update.case === "record" && u.update.value.event?.kind === EventKind.EVENT_END) ended = true;
    if (!ended) throw new Error("no END");
  };
  for (let w = 0; w < 30; w++) {
    await realTurn();
    await contract.turn(`hello ${w}`);
  }
  const nodePid = children().find((p) => p !== contractPid);
  if (nodePid === undefined || contractPid === undefined) throw new Error("node pids not found");
  for (let b = 0; b < blocks; b++) {
    for (const which of b % 2 === 0 ? ["real", "floor"] : ["floor", "real"]) {
      const nodeP = which === "real" ? nodePid : contractPid;
      const h0 = sample(process.pid);
      const n0 = sample(nodeP);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let k = 0; k < perBlock; k++) {
        if (which === "real") await realTurn();
        else await contract.turn(`hello ${k}`);
      }
      const wall = (performance.now() - t0) / perBlock;
      const c = process.cpuUsage(c0);
      const to = which === "real" ? real : floor;
      push(
        to,
        { wallMs: wall, cpuUs: (c.user + c.system) / perBlock, userUs: c.user / perBlock, sysUs: c.system / perBlock },
        "host",
      );
      const h = diff(h0, sample(process.pid), perBlock);
      delete h.cpuUs;
      push(to, h, "host");
      push(to, diff(n0, sample(nodeP), perBlock), "node");
    }
  }
  const pairs = (k: string) => (real[k] ?? []).map((r, j) => r / (floor[k]?.[j] ?? Number.NaN));
  for (const k of ["host.wallMs", "host.cpuUs", "node.cpuUs"])
    console.log(
      `ratio ${k.padEnd(14)} median ${median(pairs(k)).toFixed(3)} (per block: ${pairs(k)
        .map((x) => x.toFixed(2))
        .join(" ")})`,
    );
  const keys = [...new Set([...Object.keys(real), ...Object.keys(floor)])].sort();
  console.log(`${"per turn".padEnd(20)} ${"real".padStart(10)} ${"contract".padStart(10)} ${"diff".padStart(10)}`);
  for (const k of keys) {
    const r = median(real[k] ?? [0]);
    const f = median(floor[k] ?? [0]);
    console.log(
      `${k.padEnd(20)} ${r.toFixed(1).padStart(10)} ${f.toFixed(1).padStart(10)} ${(r - f).toFixed(1).padStart(10)}`,
    );
  }
} finally {
  await served.close();
  await contract.close();
  await contractJournal.close();
  dir.dispose();
}
