// docs/harness-authoring.md is executed: its example modules are the files it lists, its ```sh blocks
// run as written (pointed at this checkout, with temp sockets and free ports), and the outputs it
// claims are the outputs the commands print. The codec notes (registered classes, #private fields)
// are checked against the snapshot codec the nodes use.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import shout from "../../docs/examples/shout.js";
import tally, { Tally } from "../../docs/examples/tally.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { snapshotClassesOf } from "../../src/node/actor-table.js";
import {
  create,
  Mediation,
  Resumability,
  textMessage,
  ToolCallSchema,
  type EventSink,
  type Harness,
  type StartInfo,
} from "../../src/sdk/index.js";
import { decodeActor, encodeActor } from "../../src/snapshot/codec.js";
import { bash as runBash, freePort, shBlocks, stopPidFiles, strictScript } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const guide = readFileSync(join(repo, "docs/harness-authoring.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-authoring-"));
  dirs.push(dir);
  return dir;
}

const shBlocksOf = (n: number): string[] => shBlocks(guide, `${n}. `);

/**
 * Points a guide script at this checkout: `npx harnesshost` runs bin/harnesshost.js (the CLI from source), example paths
 * are absolute, sockets live in `dir`, and every 127.0.0.1 port gets a free one. Nothing is awaited
 * that the guide does not await.
 */
async function localize(script: string, dir: string): Promise<string> {
  const ports = new Map<string, string>();
  for (const m of script.matchAll(/127\.0\.0\.1:(\d+)/g)) ports.set(m[1]!, "");
  for (const fixed of ["7233", "7234"]) ports.set(fixed, "");
  for (const p of ports.keys()) ports.set(p, String(await freePort()));
  const lines = script
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((raw) => {
      let line = raw
        .replaceAll("npx harnesshost", `node ${join(repo, "bin/harnesshost.js")}`)
        .replaceAll("./docs/examples/", `${join(repo, "docs/examples")}/`)
        .replaceAll("/tmp/shout.sock", join(dir, "shout.sock"));
      if (/ serve /.test(line) && !line.includes("--addr"))
        line = line.replace(
          " serve ",
          " serve --addr 127.0.0.1:7233 --registry-addr 127.0.0.1:7234 --http-addr 127.0.0.1:0 ",
        );
      return line.replace(/127\.0\.0\.1:(\d+)/g, (_, p: string) => `127.0.0.1:${ports.get(p) ?? p}`);
    });
  return strictScript(lines.join("\n"));
}

/** Runs a localized script in `cwd`; whatever it started and did not stop is stopped afterwards. */
const bash = (script: string, cwd: string): Promise<string> =>
  runBash(script, cwd, 280_000).finally(() => stopPidFiles(cwd));

describe("docs/harness-authoring.md", () => {
  it("lists the example modules exactly as they are in docs/examples", () => {
    for (const file of ["shout.ts", "tally.ts"]) {
      const source = readFileSync(join(repo, "docs/examples", file), "utf8");
      expect(guide, `the guide's listing of ${file}`).toContain(`\`\`\`ts\n${source}\`\`\``);
    }
  });

  it("describes shout as stateless and tally as memory-tier", async () => {
    expect((await shout().describe()).capabilities?.resumability).toBe(Resumability.STATELESS_REPLAY);
    expect((await tally().describe()).capabilities?.resumability).toBe(Resumability.REQUIRES_MEMORY_SNAPSHOT);
  });

  it("builds the mediated tool call of rule 5 as shown", () => {
    const call = create(ToolCallSchema, {
      id: "call-1",
      tool: "send_email",
      args: { to: "ops@example.com" },
      mediation: Mediation.CONTROLLER_MEDIATED,
      idempotencyKey: "0123456789abcdef:call-1",
    });
    expect(call.args).toEqual({ to: "ops@example.com" });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the guide's source text, not a template.
    expect(guide).toContain("idempotencyKey: `${start.executionId}:call-1`");
  });

  describe("the snapshot notes (§3 of the guide; docs/protocol.md §9.2)", () => {
    class Entry {
      count = 0;
      firstTurn = "";
      bump(): number {
        return ++this.count;
      }
    }

    it("a tally keeps its Map across encode/decode with no snapshot code", async () => {
      const live = new Tally();
      const outputs: string[] = [];
      const sink = { output: async (text: string) => void outputs.push(text) } as unknown as EventSink;
      const start = (text: string): StartInfo => ({
        sessionUid: "s",
        executionId: "e",
        config: new Uint8Array(),
        history: [],
        inputs: [textMessage("user", text)],
        resumeFromSeq: 0,
      });
      await live.run(start("to be or not to be"), sink, new AbortController().signal);
      const restored = decodeActor(encodeActor(live), new Tally());
      await restored.run(start("to do"), sink, new AbortController().signal);
      expect(outputs).toEqual(["to=2 be=2 or=1 not=1 (6 words)", "to=3 do=1 (8 words)"]);
    });

    it("an unregistered class fails loudly with its path; snapshotClasses restores it", () => {
      class Unregistered {
        entries = new Map<string, Entry>([["to", new Entry()]]);
      }
      let caught: unknown;
      try {
        encodeActor(new Unregistered(), { classes: snapshotClassesOf(new Unregistered() as unknown as Harness) });
      } catch (err) {
        caught = err;
      }
      expect(isHostError(caught, ErrorCode.FailedPrecondition)).toBe(true);
      expect((caught as Error).message).toContain(
        'snapshot: cannot serialize state.entries.get("to"): instance of unregistered class Entry',
      );

      class Ledger {
        static snapshotClasses = [Entry];
        entries = new Map<string, Entry>([["to", new Entry()]]);
      }
      const classes = snapshotClassesOf(new Ledger() as unknown as Harness);
      const restored = decodeActor(encodeActor(new Ledger(), { classes }), new Ledger(), { classes });
      expect(restored.entries.get("to")).toBeInstanceOf(Entry);
      expect(restored.entries.get("to")?.bump()).toBe(1);
    });

    it("#private fields are lost while ordinary properties survive", () => {
      class Secretive {
        #hidden = 0;
        shown = 0;
        bump(): void {
          this.#hidden += 1;
          this.shown += 1;
        }
        get hidden(): number {
          return this.#hidden;
        }
      }
      const live = new Secretive();
      live.bump();
      live.bump();
      const restored = decodeActor(encodeActor(live), new Secretive());
      expect(restored.shown).toBe(2);
      expect(restored.hidden).toBe(0);
    });
  });

  it("sections 5 and 6: serve shout as a node, register it, exec, replay, verify", async () => {
    const dir = tempDir();
    const out = await bash(await localize([...shBlocksOf(5), ...shBlocksOf(6)].join("\n"), dir), dir);
    const lines = out.split("\n");
    expect(out).toMatch(
      /^created harness shout source=registered state=active address=unix:\/\/\S+shout\.sock digest=sha256:[0-9a-f]{64}$/m,
    );
    expect(lines).toContain("echo:MAKE SOME NOISE");
    expect(out).toContain("echo:MAKE SOME NOISE\necho:HELLO\necho:MAKE SOME NOISE\n");
    expect(out).toMatch(/^ok sess-[0-9a-f]{24} 10 records$/m);
  }, 300_000);

  it("section 7: tally on the spawned runtime continues across suspend and resume", async () => {
    const dir = tempDir();
    const out = await bash(await localize(shBlocksOf(7).join("\n"), dir), dir);
    expect(out).toMatch(/ compute=COLD .*snapshot memory=true digest=sha256:[0-9a-f]{64}$/m);
    expect(out).toMatch(/ compute=LIVE /);
    expect(out.split("\n")).toContain("to=3 do=1 (8 words)");
  }, 300_000);

  it("section 8: the conformance suite passes shout, as the guide says", async () => {
    const claimed = /# (OK: \d+ passed, 0 failed, \d+ skipped)/.exec(shBlocksOf(8).join("\n"))?.[1];
    expect(claimed, "the guide states the conformance result").toBeDefined();
    const dir = tempDir();
    const out = await bash(await localize(shBlocksOf(8).join("\n"), dir), dir);
    expect(out).toContain(claimed!);
  }, 300_000);
});
