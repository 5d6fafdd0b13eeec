// docs/harness-authoring.md is executed: its example modules are the files it lists, its ```sh blocks
// run as written through real npx in a project that installed the packed tarball (test/docs/npx-doc.ts
// says what is changed: ports, /tmp sockets; the examples run from node_modules/harnesshost/docs/examples
// as the guide says), its tsconfig type-checks a strict consumer, and the outputs it claims are the
// outputs the commands print. The codec notes (registered classes, #private fields)
// are checked against the snapshot codec the nodes use.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { codeBlocks, shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const guide = readFileSync(join(repo, "docs/harness-authoring.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await projectWorkdir("authoring");
  dirs.push(dir);
  return dir;
}

const shBlocksOf = (n: number): string[] => shBlocks(guide, `${n}. `);

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
    const out = await runDoc([...shBlocksOf(5), ...shBlocksOf(6)].join("\n"), await tempDir());
    const lines = out.split("\n");
    expect(out).toMatch(
      /^created harness shout source=registered state=active address=unix:\/\/\S+shout\.sock digest=sha256:[0-9a-f]{64}$/m,
    );
    expect(lines).toContain("echo:MAKE SOME NOISE");
    expect(out).toContain("echo:MAKE SOME NOISE\necho:HELLO\necho:MAKE SOME NOISE\n");
    expect(out).toMatch(/^ok sess-[0-9a-f]{24} 10 records$/m);
  }, 600_000);

  it("section 7: tally on the spawned runtime continues across suspend and resume", async () => {
    const out = await runDoc(shBlocksOf(7).join("\n"), await tempDir());
    expect(out).toMatch(/ compute=COLD .*snapshot memory=true digest=sha256:[0-9a-f]{64}$/m);
    expect(out).toMatch(/ compute=LIVE /);
    expect(out.split("\n")).toContain("to=3 do=1 (8 words)");
  }, 600_000);

  it("section 8: the conformance suite passes shout, as the guide says", async () => {
    const claimed = /# (OK: \d+ passed, 0 failed, \d+ skipped)/.exec(shBlocksOf(8).join("\n"))?.[1];
    expect(claimed, "the guide states the conformance result").toBeDefined();
    const out = await runDoc(shBlocksOf(8).join("\n"), await tempDir());
    expect(out).toContain(claimed!);
  }, 600_000);

  it("section 0: its tsconfig type-checks a strict consumer (top-level await, every entry point), and the .js it emits passes conformance (docs/conformance.md's CI line)", async () => {
    // §0's `npm install` lines are what the shared project did (offline, from the packed tarball).
    const dir = await tempDir();
    const [tsconfig] = codeBlocks(guide, "0. ", "json");
    writeFileSync(join(dir, "tsconfig.json"), tsconfig ?? "");
    mkdirSync(join(dir, "src"));
    // "copy one into your project": the shipped example, as the package has it, is the harness.
    copyFileSync(join(dir, "node_modules/harnesshost/docs/examples/shout.ts"), join(dir, "src/my-harness.ts"));
    writeFileSync(join(dir, "src/drive.ts"), DRIVE_TS);
    const [check] = shBlocksOf(0).slice(-1);
    expect(check).toMatch(/^npx tsc -p \./);
    const out = await runDoc(check ?? "", dir);
    expect(out).toBe("");
    const conformance = shBlocks(readFileSync(join(repo, "docs/conformance.md"), "utf8"), "Running it in CI").join(
      "\n",
    );
    expect(conformance).toContain("./dist/my-harness.js");
    await runDoc(conformance, dir);
    expect(readFileSync(join(dir, "conformance.xml"), "utf8")).toMatch(/<testsuites[^>]* failures="0"/);
  }, 600_000);
});

/** A consumer's module: top-level await, the client, the SDK and the agent kit, all under --strict. */
const DRIVE_TS = `import { agent, system } from "harnesshost/agent";
import { connect, isHarnessHostError } from "harnesshost/client";
import { Resumability } from "harnesshost/sdk";

const client = connect({ address: "127.0.0.1:7233", timeoutMs: 1000 });
try {
  const { outputs } = await client.sessions.exec({ harness: "echo", input: "hi" }).result();
  console.log(outputs.join(","), Resumability.STATELESS_REPLAY);
} catch (err) {
  if (!isHarnessHostError(err)) throw err;
  console.log(err.code);
} finally {
  client.close();
}
export const kit = typeof agent === "function" && typeof system === "function";
`;
