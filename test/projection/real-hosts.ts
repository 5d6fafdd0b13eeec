// The real side of the model-based tests: a Host on a SQLite or an in-memory journal whose tool executor
// can cut or lose a turn right after a real demo.write, and which can be dropped and reopened on the
// same journal (a lost host). Invariant: exactly one Host is current; a dropped one is closed only after
// its hung operation settled, and the journal (with the demo-writes file) outlives every Host.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DemoWriteExecutor, readDemoWrites } from "../../harnesses/ask/demo-write.js";
import { Host } from "../../src/host/host.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { CountingModel, fixturePath } from "../tiers/helpers.js";
import { CutExecutor } from "./cut-executor.js";

export type JournalKind = "sqlite" | "memory";

const HARNESSES = [
  { name: "writer", runtime: "local" as const, target: fixturePath("writer.ts") },
  { name: "asker", runtime: "local" as const, target: new URL("../waits/fixtures/asker.ts", import.meta.url).pathname },
];

/**
 * One Host's view of an in-memory journal that outlives it: closing the view leaves the journal open
 * for the next Host, and every later call through the view fails, as calls of a dead process would.
 */
function hostView(journal: Journal): Journal {
  let closed = false;
  return new Proxy(journal, {
    get(target, prop) {
      if (prop === "close")
        return async () => {
          closed = true;
        };
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (closed) throw new Error("this host is gone");
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export class RealHosts {
  host!: Host;
  tools!: CutExecutor;
  model!: CountingModel;
  private readonly dir = mkdtempSync(join(tmpdir(), "hh-model-"));
  private readonly memory: Journal | undefined;

  constructor(readonly kind: JournalKind) {
    this.memory = kind === "memory" ? new MemoryJournal() : undefined;
  }

  get writesFile(): string {
    return join(this.dir, "demo-writes.jsonl");
  }

  private async openOne(): Promise<{ host: Host; tools: CutExecutor; model: CountingModel }> {
    const tools = new CutExecutor(new DemoWriteExecutor(this.writesFile));
    const model = new CountingModel();
    const host = await Host.open(
      // The writer fixture calls demo.write CONTROLLER_MEDIATED: the operator lets it run unattended.
      { dataDir: this.dir, harnesses: HARNESSES, nodeIdleMs: 60_000, toolsWithoutApproval: ["demo.write"] },
      { tools, model, ...(this.memory ? { journal: hostView(this.memory) } : {}) },
    );
    return { host, tools, model };
  }

  async open(): Promise<this> {
    Object.assign(this, await this.openOne());
    return this;
  }

  /**
   * Runs `op` on the current host; once its executor has run (the effect happened), the host is lost:
   * a new one opens on the same journal, then the old operation is let go and the old host closed.
   * Returns whether the executor ran (false: `op` settled first, nothing was lost).
   */
  async loseDuring(op: (host: Host) => Promise<unknown>): Promise<boolean> {
    const lost = this.tools.loseNext();
    const running = op(this.host).then(
      () => "settled" as const,
      () => "settled" as const,
    );
    const first = await Promise.race([lost.ran.then(() => "ran" as const), running]);
    if (first === "settled") {
      this.tools.clear();
      return false;
    }
    // The old host dies: its journal connection closes before its operation gets to write anything.
    const old = this.host;
    await this.open();
    await old.close();
    lost.release();
    await running;
    return true;
  }

  /** Drops the current host between operations and opens a new one on the same journal. */
  async reopen(): Promise<void> {
    const old = this.host;
    await this.open();
    await old.close();
  }

  /** Every real demo.write so far, as [session, key] pairs. */
  writes(): { session: string; key: string }[] {
    return readDemoWrites(this.writesFile);
  }

  async close(): Promise<void> {
    await this.host.close();
    await this.memory?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
