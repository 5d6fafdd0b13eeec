// Daemon compatibility with the reference's agentsessionsd (issue 22 item 4, docs/migrating-from-go.md):
// `--harness name=ADDRESS` for a running node, `--project`, `--model ID` with `--model-url`,
// `--model-path` (a query string kept) and `--model-auth-header`, `chat` served when a model is
// configured, `--registry-addr off`, `serve --version`. One served host for every case.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { parseHarnessFlag } from "../../src/host/config.js";
import { type HarnessNode, serveHarness } from "../../src/node/serve.js";
import { FakeEndpoint, json } from "../model/fake-endpoint.js";
import { ServeProcess } from "../reliability/serve-process.js";
import { hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-go-daemon-"));
const endpoint = new FakeEndpoint();
let node: HarnessNode | undefined;
let serve: ServeProcess | undefined;
let listening = "";

function completion(content: string) {
  return json(200, {
    id: "c1",
    object: "chat.completion",
    model: "gpt-go",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  });
}

beforeAll(async () => {
  await endpoint.start();
  const echo = builtinHarnesses["echo"];
  if (echo === undefined) throw new Error("no echo harness");
  node = await serveHarness(echo, { listen: "127.0.0.1:0", actors: false });
  serve = await ServeProcess.start({
    args: [
      "--data",
      join(dir, "data"),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "off",
      "--http-addr",
      "off",
      "--project",
      "acme",
      "--model",
      "gpt-go",
      "--model-url",
      `${endpoint.baseUrl}/openai/deployments/d1`,
      "--model-path",
      "/chat/completions?api-version=2024-02-01",
      "--model-auth-header",
      "api-key",
      "--harness",
      `gonode=${node.address}`,
      "--log-level",
      "warn",
    ],
    env: { ...process.env, MODEL_API_KEY: "k-go" },
    onStderr: (chunk) => (listening += chunk),
  });
}, 300_000);

afterAll(async () => {
  await serve?.stop();
  await node?.close();
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("serve, as agentsessionsd is started", () => {
  it("goHarnessShorthandIsARemoteNode: name=ADDRESS means name=remote:ADDRESS; a typo is still refused", () => {
    for (const address of ["127.0.0.1:9000", "[::1]:9000", "node.local:9000", "unix:///tmp/x.sock", "dns:///n:9000"])
      expect(parseHarnessFlag(`mine=${address}`)).toMatchObject({ name: "mine", runtime: "remote", target: address });
    expect(parseHarnessFlag("mine=remote:127.0.0.1:9000")).toMatchObject({
      runtime: "remote",
      target: "127.0.0.1:9000",
    });
    expect(parseHarnessFlag("mine=local:echo")).toMatchObject({ runtime: "local", target: "echo" });
    expect(() => parseHarnessFlag("mine=locl:echo")).toThrow(/unknown runtime "locl"; did you mean local\?/);
    expect(() => parseHarnessFlag("mine=127.0.0.1:0")).toThrow(/unknown runtime/);
  });

  it("registryListenerCanBeTurnedOff, chatServedWhenAModelIsConfigured: the listening line says so", () => {
    expect(listening).toMatch(/registry=off /);
    const harnesses = /harnesses=(\S+)/.exec(listening)?.[1]?.split(",") ?? [];
    expect(harnesses).toEqual(expect.arrayContaining(["echo", "chat", "gonode"]));
  });

  it("modelIdReachesTheConfiguredEndpoint: chat answers through --model-url + --model-path with the api-key header", async () => {
    endpoint.reply(completion("hello from go"));
    const res = await hh(dir, "exec", "--server", serve?.addr ?? "", "--harness", "chat", "--input", "hi", "--json");
    expect(res.stderr).toBe("");
    expect(JSON.parse(res.stdout)).toMatchObject({ output: "hello from go" });
    const req = endpoint.requests.at(-1);
    expect(req?.url).toBe("/v1/openai/deployments/d1/chat/completions?api-version=2024-02-01");
    expect([req?.headers["api-key"], req?.headers["authorization"], req?.body["model"]]).toEqual([
      "k-go",
      undefined,
      "gpt-go",
    ]);
  }, 120_000);

  it("a session on the shorthand node runs there, in the --project default project", async () => {
    endpoint.reply(completion("from the node's turn"));
    const exec = await hh(dir, "exec", "--server", serve?.addr ?? "", "--harness", "gonode", "--input", "x", "--json");
    const { session, output } = JSON.parse(exec.stdout) as { session: string; output: string };
    expect(output).toBe("from the node's turn");
    const get = await hh(dir, "get", "--server", serve?.addr ?? "", "--session", session, "--json");
    expect(JSON.parse(get.stdout)).toMatchObject({ harness: "gonode", metadata: { project: "acme" } });
  }, 120_000);

  it("serve --version prints the package version and serves nothing", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    const res = await hh(dir, "serve", "--version");
    expect([res.code, res.stdout.trim()]).toEqual([0, version]);
    const go = await hh(dir, "serve", "-version");
    expect(go.stdout.trim()).toBe(version);
  }, 120_000);

  it("contradictory model flags are a usage error before anything opens", async () => {
    const res = await hh(dir, "serve", "--model-url", "http://127.0.0.1:1/v1", "--data", join(dir, "never"));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--model-url, --model-path and --model-auth-header need --model ID or --model URL/);
  }, 120_000);
});
