// One error table, three edges: a failure with a given ErrorCode leaves a gRPC listener with the
// table's gRPC status, the HTTP listener with its Connect code and HTTP status, and the CLI with its
// exit status and --json code — table-driven, through a real server, the HTTP listener and the bin.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { ERROR_TABLE, ErrorCode } from "../../src/errors/index.js";
import { hh } from "../cli/bin.js";
import { codeOf, type Fixture, startFixture } from "../server/helpers.js";

const MISSING = "sess-000000000000000000000000";
const dir = mkdtempSync(join(tmpdir(), "hh-edges-"));
const fixtures: Fixture[] = [];
afterAll(async () => {
  await Promise.all(fixtures.map((f) => f.close()));
  rmSync(dir, { recursive: true, force: true });
});

interface Case {
  readonly code: ErrorCode;
  readonly tokens?: string[];
  readonly grpc: (f: Fixture) => Promise<unknown>;
  /** A unary Connect call: method path and JSON body. */
  readonly http: { readonly path: string; readonly body: unknown };
  /** CLI arguments (before --server ADDR --json). */
  readonly cli: readonly string[];
}

const CASES: readonly Case[] = [
  {
    code: ErrorCode.NotFound,
    grpc: (f) => f.sessions.getSession({ uid: MISSING }),
    http: { path: "/agentsessions.v1.Sessions/GetSession", body: { uid: MISSING } },
    cli: ["get", "--session", MISSING],
  },
  {
    code: ErrorCode.InvalidArgument,
    grpc: (f) => f.sessions.createSession({ session: { harness: "nope" } }),
    http: { path: "/agentsessions.v1.Sessions/CreateSession", body: { session: { harness: "nope" } } },
    cli: ["exec", "--harness", "nope", "--input", "hi"],
  },
  {
    code: ErrorCode.Unauthenticated,
    tokens: ["edges-token"],
    grpc: (f) => f.sessions.listSessions({}),
    http: { path: "/agentsessions.v1.Sessions/ListSessions", body: {} },
    cli: ["list"],
  },
];

function postJson(base: string, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("one error table at every edge", () => {
  for (const c of CASES) {
    const row = ERROR_TABLE[c.code];
    it(`${c.code} leaves gRPC as ${row.grpc}, HTTP as ${row.http} ${row.connect}, the CLI with exit ${row.exit}`, async () => {
      const f = await startFixture({ httpAddr: "127.0.0.1:0", ...(c.tokens ? { tokens: c.tokens } : {}) });
      fixtures.push(f);
      expect(await codeOf(c.grpc(f))).toBe(GrpcStatus[row.grpc]);
      const http = await postJson(f.server.httpUrl!, c.http.path, c.http.body);
      expect(http.status).toBe(row.http);
      expect((JSON.parse(http.body) as { code: string }).code).toBe(row.connect);
      const cli = await hh(dir, ...c.cli, "--server", f.server.addr, "--json");
      expect(cli.code).toBe(row.exit);
      expect((JSON.parse(cli.stderr) as { error: { code: string } }).error.code).toBe(row.grpc);
    }, 120_000);
  }
});
