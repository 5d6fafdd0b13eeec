// Auth and transport on a real `harnesshost serve` (docs/protocol.md §15; docs/operations.md "Tokens"): TLS with a certificate made in the test,
// bearer tokens from a file on Sessions and the registry (UNAUTHENTICATED when missing,
// PERMISSION_DENIED when wrong), the CLI's --tls-ca/--token-file, the registry's refusal of a
// non-loopback listener unless TLS and a token are both configured, and logs that never carry a
// token, a fence or message content.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { textMessage } from "../../src/controller/events.js";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { RpcError, createClient } from "../../src/wire/index.js";
import { BIN, ServeProcess } from "../reliability/serve-process.js";

const TOKEN = "tok-7f3a9c-transport-secret";
const SECRET_INPUT = "private-input-c0ffee";

let dir = "";
let cert = "";
let key = "";
let tokenFile = "";
let serve: ServeProcess | undefined;
let logs = "";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function grpcCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return GrpcStatus.OK;
  } catch (err) {
    if (err instanceof RpcError) return err.grpcCode;
    throw err;
  }
}

/** Runs `serve` expecting it to refuse its flags; returns exit status and stderr. */
function refusedServe(...args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [BIN, "serve", "--data", join(dir, "refused"), "--addr", "127.0.0.1:0", ...args],
    { encoding: "utf8", timeout: 60_000 },
  );
  return { status: r.status, stderr: r.stderr };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-transport-"));
  cert = join(dir, "cert.pem");
  key = join(dir, "key.pem");
  const made = spawnSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { encoding: "utf8" },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
  tokenFile = join(dir, "tokens");
  writeFileSync(tokenFile, `# rotated tokens: new first, old until clients moved\n${TOKEN}\nold-token-still-valid\n`);
  serve = await ServeProcess.start({
    args: [
      "--data",
      join(dir, "data"),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "0.0.0.0:0",
      "--http-addr",
      "127.0.0.1:0",
      "--tls-cert",
      cert,
      "--tls-key",
      key,
      "--token-file",
      tokenFile,
      "--log-level",
      "debug",
    ],
    onStderr: (c) => void (logs += c),
  });
}, 120_000);

afterAll(async () => {
  await serve?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const tls = () => credentials.createSsl(readFileSync(cert));
const registryAddr = () => `127.0.0.1:${serve!.registryAddr.split(":").at(-1)}`;

describe("TLS and bearer tokens on serve", () => {
  it("the CLI over TLS with --tls-ca and --token-file runs a turn", async () => {
    const r = await cli(
      "exec",
      "--input",
      SECRET_INPUT,
      "--server",
      serve!.addr,
      "--tls-ca",
      cert,
      "--token-file",
      tokenFile,
      "--json",
    );
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ output: `echo:${SECRET_INPUT}` });
  });

  it("Sessions: missing token UNAUTHENTICATED, wrong PERMISSION_DENIED, each listed token OK", async () => {
    const client = createClient(Sessions, serve!.addr, { credentials: tls() });
    try {
      expect(await grpcCode(client.listSessions({}))).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await grpcCode(client.listSessions({}, { metadata: { authorization: "Bearer nope" } }))).toBe(
        GrpcStatus.PERMISSION_DENIED,
      );
      expect(await grpcCode(client.listSessions({}, { metadata: { authorization: `Basic ${TOKEN}` } }))).toBe(
        GrpcStatus.UNAUTHENTICATED,
      );
      for (const t of [TOKEN, "old-token-still-valid"])
        expect(await grpcCode(client.listSessions({}, { metadata: { authorization: `Bearer ${t}` } }))).toBe(
          GrpcStatus.OK,
        );
      const exec = client.exec({ inputs: [textMessage("user", "x")] }, { metadata: { authorization: "Bearer nope" } });
      await expect(
        (async () => {
          for await (const _ of exec) void _;
        })(),
      ).rejects.toMatchObject({ grpcCode: GrpcStatus.PERMISSION_DENIED });
    } finally {
      client.close();
    }
  });

  it("the registry on a non-loopback listener (allowed: TLS + token) enforces the token", async () => {
    const client = createClient(HarnessRegistry, registryAddr(), { credentials: tls() });
    try {
      expect(await grpcCode(client.listHarnesses({}))).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await grpcCode(client.listHarnesses({}, { metadata: { authorization: "Bearer nope" } }))).toBe(
        GrpcStatus.PERMISSION_DENIED,
      );
      expect(await grpcCode(client.listHarnesses({}, { metadata: { authorization: `Bearer ${TOKEN}` } }))).toBe(
        GrpcStatus.OK,
      );
    } finally {
      client.close();
    }
  });

  it("a plaintext client cannot talk to the TLS listener", async () => {
    const client = createClient(Sessions, serve!.addr);
    try {
      expect(
        await grpcCode(client.listSessions({}, { metadata: { authorization: `Bearer ${TOKEN}` }, timeoutMs: 10_000 })),
      ).not.toBe(GrpcStatus.OK);
    } finally {
      client.close();
    }
  });

  it("logs carry the calls but never the token, a fence or message content", () => {
    expect(logs).toContain("/agentsessions.v1.Sessions/Exec");
    expect(logs).toContain("PERMISSION_DENIED");
    for (const secret of [TOKEN, "old-token-still-valid", SECRET_INPUT, `echo:${SECRET_INPUT}`, "Bearer", "fence"])
      expect(logs).not.toContain(secret);
  });
});

describe("sessions listener policy on serve", () => {
  it("serveRefusesANonLoopbackSessionsPortWithoutTlsAndATokenInOneLine", () => {
    for (const extra of [[], ["--token-file", tokenFile], ["--tls-cert", cert, "--tls-key", key]]) {
      const r = refusedServe("--addr", "0.0.0.0:0", "--registry-addr", "127.0.0.1:0", ...extra);
      expect(r.status, r.stderr).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /--addr "0\.0\.0\.0:0" must be a literal loopback IP .* unless both TLS .* and a bearer token/,
      );
    }
  }, 180_000);
});

describe("registry listener policy on serve", () => {
  it("refuses a non-loopback registry without TLS and a token, and with only one of them", () => {
    for (const extra of [[], ["--token-file", tokenFile], ["--tls-cert", cert, "--tls-key", key]]) {
      const r = refusedServe("--registry-addr", "0.0.0.0:0", ...extra);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/loopback/);
    }
  }, 180_000);
});
