// The published package, packed from this checkout and installed into an empty project (offline; see
// consumer.ts). Invariants: the tarball holds dist/, bin/, proto/, docs/, README, LICENSE and
// package.json only; publint and attw find nothing; from plain Node (no tsx anywhere) every entry
// point imports, the bin runs, a harness written against the public SDK passes conformance and serves
// turns driven by the public client, and a strict TypeScript consumer type-checks against the shipped
// declarations under NodeNext and Bundler resolution. On the other Node releases only what can differ by
// Node runs (strict-tsc.ts, OTHER_NODE): the tarball's checks and the type-check run on the floor.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pointAt, useFromCodeExamples } from "../docs/js-examples.js";
import { unbundled } from "../support/bundle-meta.js";
import { REPO, run, type Packed } from "./packed.js";
import { ownConsumer } from "./shared.js";
import { describeOnTheFloor, inDir, itOnTheFloor, strictTsc } from "./strict-tsc.js";

const SHIPPED = /^(dist\/|bin\/|proto\/|docs\/|README\.md$|LICENSE$|package\.json$)/;

let packed: Packed;
let project: string;
beforeAll(async () => {
  // The tarball every test file shares (packed once per tree); a project of our own without tsx.
  ({ packed, project } = await ownConsumer("consumer"));
}, 600_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** Runs a command in the consumer project; its exit code and output (never throws on exit ≠ 0). */
function inProject(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return inDir(project, cmd, args);
}

const HARNESS = `import { create, HarnessDescriptorSchema, Resumability, textOf } from "harnesshost/sdk";

export default () => ({
  describe: () =>
    create(HarnessDescriptorSchema, {
      id: "upper",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    }),
  async run(start, sink, signal) {
    for (const input of start.inputs) await sink.output(textOf(input).toUpperCase(), signal);
  },
});
`;

describeOnTheFloor("npm package", () => {
  it("the tarball ships only the whitelisted files", () => {
    expect(packed.files.filter((f) => !SHIPPED.test(f))).toEqual([]);
    expect(packed.files.filter((f) => /(^|\/)(test|bench)\//.test(f) || /\.test\.[jt]s$/.test(f))).toEqual([]);
    expect(packed.files).toContain("bin/harnesshost.js");
    expect(packed.files).toContain("dist/src/cli/run.js");
    // The bundle the bin and the exports run (scripts/bundle.mjs); its metafile is for the tests only.
    expect(packed.files).toContain("dist/bundle/cli.js");
    expect(packed.files).toContain("dist/bundle/index.js");
    expect(packed.files).not.toContain("dist/bundle-meta.json");
    expect(packed.files).toContain("dist/src/index.d.ts");
    expect(packed.files).toContain("dist/src/index.js.map");
    expect(packed.files).toContain("proto/agentsessions/v1/session.proto");
    expect(packed.files).toContain("LICENSE");
    // The operator console (docs/console.md) ships built: serve needs no build step and no network.
    expect(packed.files).toContain("dist/console/index.html");
    expect(packed.files.some((f) => /^dist\/console\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
  });

  it("publint reports nothing, warnings included", async () => {
    const bin = join(REPO, "node_modules/publint/src/cli.js");
    const { stdout } = await run(process.execPath, [bin, "run", packed.tarball, "--strict"], { cwd: packed.dir });
    expect(stdout).toMatch(/All good!/);
  });

  it("attw finds no problem for ESM consumers (node16 and bundler resolution)", async () => {
    // The package is ESM-only (docs/packaging.md): the esm-only profile exits non-zero on any problem
    // for node16-esm or bundler resolution; node10 and require() from CommonJS are out of scope.
    const bin = join(REPO, "node_modules/@arethetypeswrong/cli/dist/index.js");
    const { stdout } = await run(process.execPath, [bin, packed.tarball, "--profile", "esm-only", "--format", "json"], {
      cwd: packed.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(stdout) as { analysis: { problems: { resolutionKind?: string }[] } };
    const esm = report.analysis.problems.filter(
      (p) => p.resolutionKind === "node16-esm" || p.resolutionKind === "bundler",
    );
    expect(esm).toEqual([]);
  });
});

describe("installed into an empty project", () => {
  it("every entry point imports from plain Node, and no tsx is installed", async () => {
    writeFileSync(
      join(project, "imports.mjs"),
      `import * as root from "harnesshost";
import * as sdk from "harnesshost/sdk";
import * as client from "harnesshost/client";
import * as conformance from "harnesshost/conformance";
console.log(JSON.stringify({
  root: [typeof root.Host, typeof root.startServer, typeof root.openJournal, typeof root.HostError],
  sdk: [typeof sdk.serveHarness, typeof sdk.EventKind, typeof sdk.ToolResult_Code, typeof sdk.textOf],
  client: [typeof client.connect, typeof client.HarnessHostError],
  conformance: [typeof conformance.runConformance, typeof conformance.conformanceSuite],
}));
`,
    );
    const res = await inProject(process.execPath, ["imports.mjs"]);
    expect(res.stderr).toBe("");
    expect(JSON.parse(res.stdout)).toEqual({
      root: ["function", "function", "function", "function"],
      sdk: ["function", "object", "object", "function"],
      client: ["function", "function"],
      conformance: ["function", "function"],
    });
    expect((await inProject(process.execPath, ["-e", "import('tsx').then(() => process.exit(3))"])).code).not.toBe(3);
  });

  it("the bin prints --version and --help without loading any command module", async () => {
    const bin = join(project, "node_modules/.bin/harnesshost");
    expect((await inProject(bin, ["--version"])).stdout.trim()).toBe(packed.version);
    // The hook runs on the loader thread: writeSync, because what a process.stderr.write there still
    // holds when the process exits is lost (Node 24 lost it in 3 of 15 runs of --help).
    writeFileSync(
      join(project, "trace.mjs"),
      `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "import { writeSync } from 'node:fs'; export async function load(url, context, next) { if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\\\n'); return next(url, context); }"));
// and require(): the bundle's vendor groups (zod, grpc-js, protobuf-es, pino) load by require().
import Module from "node:module";
import { writeSync } from "node:fs";
const load = Module._load;
Module._load = function (request, parent, isMain, ...rest) {
  try { const p = Module._resolveFilename(request, parent, isMain); if (p.startsWith("/")) writeSync(2, "LOADED " + p + "\\n"); } catch {}
  return load.call(this, request, parent, isMain, ...rest);
};
`,
    );
    const traced = await inProject(process.execPath, ["--import", "./trace.mjs", bin, "--help"]);
    expect(traced.code).toBe(0);
    expect(traced.stdout).toMatch(/^usage: harnesshost <command>/);
    const loaded = unbundled(traced.stderr.split("\n").filter((l) => l.startsWith("LOADED ")));
    expect(loaded.some((l) => l.endsWith("/dist/src/cli/main.js"))).toBe(true);
    expect(loaded.filter((l) => /\/cli\/commands\/(?!index\.js)|\/node_modules\/(?!harnesshost\/)/.test(l))).toEqual(
      [],
    );
  });

  it("npx harnesshost conformance passes a harness written against the public SDK", async () => {
    writeFileSync(join(project, "h.mjs"), HARNESS);
    const res = await inProject("npx", ["--no-install", "harnesshost", "conformance", "--harness", "./h.mjs"]);
    expect(res.stdout).toMatch(/OK: \d+ passed, 0 failed/);
    expect(res.code).toBe(0);
  }, 120_000);

  // Node 22.18+ and 24 strip TypeScript types themselves (process.features.typescript): there a .ts
  // module loads without tsx, as src/runtime/harness-module.ts intends; on Node 20 the error says what to do.
  const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);

  it.runIf(stripsTypes)(
    "aTsHarnessModuleRunsWithoutTsxOnANodeThatStripsTypes",
    async () => {
      writeFileSync(join(project, "h.ts"), HARNESS);
      const res = await inProject("npx", ["--no-install", "harnesshost", "conformance", "--harness", "./h.ts"]);
      expect(res.stdout).toMatch(/OK: \d+ passed, 0 failed/);
      expect(res.code).toBe(0);
    },
    120_000,
  );

  it.skipIf(stripsTypes)("a .ts harness module without tsx fails with a message saying what to do", async () => {
    writeFileSync(join(project, "h.ts"), HARNESS);
    const res = await inProject(join(project, "node_modules/.bin/harnesshost"), [
      "node",
      "--harness",
      "./h.ts",
      "--listen",
      "127.0.0.1:0",
    ]);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/is TypeScript and tsx is not installed: compile it to \.js .* or install tsx/);
  });

  it("the README's client and SDK examples run with plain Node against `harnesshost serve` from the package", async () => {
    const serve = spawn(
      process.execPath,
      [
        join(project, "node_modules/.bin/harnesshost"),
        "serve",
        "--data",
        "./serve-data",
        "--addr",
        "127.0.0.1:0",
        "--registry-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
      ],
      { cwd: project, stdio: ["ignore", "inherit", "pipe"] },
    );
    const exited = new Promise<void>((resolve) => serve.once("exit", () => resolve()));
    try {
      const listening = await new Promise<RegExpMatchArray>((resolve, reject) => {
        createInterface({ input: serve.stderr }).on("line", (line) => {
          const m = /^harnesshost listening addr=(\S+) registry=(\S+)/.exec(line);
          if (m) resolve(m);
        });
        void exited.then(() => reject(new Error("serve exited before listening")));
      });
      for (const [i, example] of useFromCodeExamples().entries()) {
        const file = join(project, `readme-${i + 1}.mjs`);
        writeFileSync(file, pointAt(example.code, listening[1] ?? "", listening[2] ?? "", project));
        const res = await inProject(process.execPath, [file]);
        expect(res.stderr).toBe("");
        expect(res.stdout.trimEnd().split("\n")).toEqual(example.expected);
      }
      // The console works from the installed package: the printed URL serves its page and its script.
      const consoleUrl = /console=(\S+)/.exec(listening.input ?? "")?.[1] ?? "";
      const page = await fetch(consoleUrl);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /src="\.\/(assets\/index-[\w-]+\.js)"/.exec(html)?.[1] ?? "";
      expect((await fetch(new URL(script, consoleUrl))).status).toBe(200);
    } finally {
      serve.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  it("aHarnessImportingThePackageByNameSharesTheServedHostsErrorClasses", async () => {
    // The bundled bin and the exports are one copy (scripts/bundle.mjs): the harness's HostError is the
    // one the host checks, so the turn fails FAILED_PRECONDITION (exit 4), not as an unknown error (1).
    cpSync(join(REPO, "test/fixtures/one-copy/refuser.mjs"), join(project, "refuser.mjs"));
    const bin = join(project, "node_modules/.bin/harnesshost");
    const serve = spawn(
      process.execPath,
      [
        bin,
        "serve",
        "--data",
        "./refuser-data",
        "--addr",
        "127.0.0.1:0",
        "--registry-addr",
        "off",
        "--http-addr",
        "off",
        "--harness",
        "refuser=local:./refuser.mjs",
      ],
      { cwd: project, stdio: ["ignore", "ignore", "pipe"] },
    );
    const exited = new Promise<void>((resolve) => serve.once("exit", () => resolve()));
    try {
      const addr = await new Promise<string>((resolve, reject) => {
        createInterface({ input: serve.stderr }).on("line", (line) => {
          const m = /^harnesshost listening addr=(\S+)/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
        void exited.then(() => reject(new Error("serve exited before listening")));
      });
      const res = await inProject(bin, ["exec", "--server", addr, "--harness", "refuser", "--input", "hi"]);
      expect(res.stderr).toContain("the refuser refuses every turn");
      expect(res.code).toBe(4);
    } finally {
      serve.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  itOnTheFloor(
    "a strict TypeScript consumer (exactOptionalPropertyTypes, skipLibCheck false) type-checks under NodeNext and Bundler",
    async () => {
      const src = join(project, "ts");
      mkdirSync(src, { recursive: true });
      writeFileSync(join(src, "consumer.ts"), CONSUMER_TS);
      for (const [i, example] of useFromCodeExamples().entries())
        writeFileSync(join(src, `readme-${i + 1}.ts`), example.code);
      for (const res of await strictTsc(project, "", ["ts/*.ts"])) {
        expect(res.output, res.name).toBe("");
        expect(res.code, res.name).toBe(0);
      }
    },
    240_000,
  );
});

/** Uses what the docs use: the SDK's enums and ask types, the client's errors, an embedded Host. */
const CONSUMER_TS = `import { Host, type ToolExecutor } from "harnesshost";
import { connect, isHarnessHostError, type ExecEvent } from "harnesshost/client";
import { runConformance } from "harnesshost/conformance";
import {
  type AskRequest,
  create,
  EventKind,
  type Harness,
  type HarnessFactory,
  HarnessDescriptorSchema,
  Mediation,
  Resumability,
  textOf,
  ToolCallSchema,
  ToolResult_Code,
} from "harnesshost/sdk";

const tools: ToolExecutor = { execute: async (call) => ({ id: call.id, output: { ok: true } }) };
const question: AskRequest = { question: "go on?", choices: ["yes", "no"], allowFreeText: false };

class Gated implements Harness {
  describe() {
    return create(HarnessDescriptorSchema, {
      id: "gated",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    });
  }
  async run(start: Parameters<Harness["run"]>[0], sink: Parameters<Harness["run"]>[1], signal: AbortSignal) {
    const earlier = start.history.filter((e) => e.kind === EventKind.EVENT_OUTPUT).length;
    const answer = await sink.ask?.(question, signal);
    const call = create(ToolCallSchema, {
      id: "c1",
      tool: "demo.write",
      mediation: Mediation.REQUIRES_APPROVAL,
      idempotencyKey: \`\${start.sessionUid}/\${earlier}\`,
    });
    const result = await sink.toolCall(call, signal);
    const denied = result.code === ToolResult_Code.APPROVAL_DENIED;
    await sink.output(\`\${earlier} \${answer?.text ?? ""} \${denied} \${start.inputs.map(textOf).join()}\`, signal);
  }
}
export const factory: HarnessFactory = () => new Gated();

export async function embed(): Promise<void> {
  const host = await Host.open({ dataDir: "./embedded" }, { tools });
  await host.close();
}

export async function drive(signal: AbortSignal): Promise<string[]> {
  const client = connect({ address: "127.0.0.1:7233", timeoutMs: 5000 });
  try {
    const call = client.sessions.exec({ harness: "echo", input: ["a", "b"] }, { signal });
    const events: ExecEvent[] = [];
    for await (const e of call) events.push(e);
    const { outputs, session } = await call.result();
    await client.sessions.approve({ session: session.metadata?.uid ?? "", reason: "ok" });
    return [...outputs];
  } catch (err) {
    if (isHarnessHostError(err, "not_found")) return [err.code, err.status, err.message, err.requestId ?? ""];
    throw err;
  } finally {
    client.close();
  }
}

export async function check(): Promise<boolean> {
  const report = await runConformance({ harness: "./h.mjs" });
  return report.failed === 0;
}
`;
