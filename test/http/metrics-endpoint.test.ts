// /metrics on the HTTP listener (docs/operations.md, "Metrics"): served beside the API and the console,
// open when the host has no tokens, and behind the API's bearer token when it has — on a loopback
// listener with tokens and on a listener secured by TLS + token alike.
import { spawnSync } from "node:child_process";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Host } from "../../src/host/host.js";
import { startServer } from "../../src/server/server.js";
import { startFixture, type Fixture } from "../server/helpers.js";

const TOKEN = "metrics-scrape-token";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(url: string, headers: Record<string, string> = {}, ca?: Buffer): Promise<Answer> {
  const target = new URL("/metrics", url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, { headers, ...(ca ? { ca } : {}) }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function expectTokenRequired(url: string, ca?: Buffer): Promise<void> {
  const none = await get(url, {}, ca);
  expect(none.status).toBe(401);
  expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
  expect(none.body).not.toContain("harnesshost_");
  const wrong = await get(url, { authorization: "Bearer not-the-token" }, ca);
  expect(wrong.status).toBe(403);
  expect(wrong.body).not.toContain("harnesshost_");
  const right = await get(url, { authorization: `Bearer ${TOKEN}` }, ca);
  expect(right.status).toBe(200);
  expect(right.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(right.body).toContain("# TYPE harnesshost_turns_started_total counter");
}

describe("/metrics on the HTTP listener", () => {
  it("metricsAreServedOnTheHttpListenerWithoutATokenWhenTheHostHasNone", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    await f.sessions.createSession({ session: { harness: "echo" } });
    const r = await get(f.server.httpUrl!);
    expect(r.status).toBe(200);
    expect(r.body).toMatch(
      /^harnesshost_rpcs_total\{listener="sessions",method="\/agentsessions\.v1\.Sessions\/CreateSession",code="OK"\} 1$/m,
    );
  });

  it("metricsOnTheHttpListenerNeedTheApiTokenWhenTheHostHasTokens", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0", tokens: [TOKEN] }));
    await expectTokenRequired(f.server.httpUrl!);
  });

  it("metricsOnASecuredListenerNeedTheApiToken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-metrics-tls-"));
    const cert = join(dir, "cert.pem");
    const key = join(dir, "key.pem");
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key]
        .concat(["-out", cert, "-days", "1", "-subj", "/CN=localhost"])
        .concat(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]),
      { encoding: "utf8" },
    );
    if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
    const host = await Host.open({ dataDir: join(dir, "data"), nodeIdleMs: 0 });
    const server = await startServer(host, {
      addr: "127.0.0.1:0",
      registryAddr: "127.0.0.1:0",
      httpAddr: "127.0.0.1:0",
      tokens: [TOKEN],
      tls: { cert: readFileSync(cert), key: readFileSync(key) },
      logger: pino({ level: "silent" }),
    });
    try {
      expect(server.httpUrl).toMatch(/^https:/);
      await expectTokenRequired(server.httpUrl!, readFileSync(cert));
    } finally {
      await server.close(500);
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
