// The HTTP listener (docs/console.md): Sessions, the read-only registry and the Console views over the
// Connect protocol, served by the very handler objects the gRPC listener serves, behind the same auth,
// with the same status codes, the same listen policy, and no way in for another origin.
import { request } from "node:http";
import { join, relative } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { ExecRequestSchema, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Console } from "../../src/gen/harnesshost/v1/console_pb.js";
import { exportJsonl } from "../../src/journal/transfer/export.js";
import { ConsoleAssets } from "../../src/http/assets.js";
import { WAITING_SCAN } from "../../src/server/console-service.js";
import { checkListenAddresses } from "../../src/server/listen-policy.js";
import { parseHarnessFlag } from "../../src/host/config.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "../server/helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface HttpClients {
  sessions: Client<typeof Sessions>;
  registry: Client<typeof HarnessRegistry>;
  views: Client<typeof Console>;
}

function httpClients(url: string, token?: string): HttpClients {
  const transport = createConnectTransport({
    baseUrl: url,
    httpVersion: "1.1",
    interceptors:
      token === undefined
        ? []
        : [
            (next) => (req) => {
              req.header.set("authorization", `Bearer ${token}`);
              return next(req);
            },
          ],
  });
  return {
    sessions: createClient(Sessions, transport),
    registry: createClient(HarnessRegistry, transport),
    views: createClient(Console, transport),
  };
}

async function connectCodeOf(p: Promise<unknown>): Promise<Code> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err).code;
  }
  throw new Error("expected the call to fail");
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** A raw HTTP request to the listener: status, headers and body. */
function raw(
  url: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(opts.path, url), { method: opts.method ?? "GET", headers: opts.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

describe("HTTP listener", () => {
  it("oneImplementationTwoTransports: a session made over gRPC reads the same over HTTP, and a turn run over HTTP replays the same over gRPC", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const url = f.server.httpUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const http = httpClients(url);

    const made = await f.sessions.createSession({ session: { harness: "echo", metadata: { name: "both" } } });
    const uid = made.metadata!.uid;
    const [overGrpc, overHttp] = [await f.sessions.getSession({ uid }), await http.sessions.getSession({ uid })];
    expect(overHttp).toEqual(overGrpc);

    const updates = await collect(
      http.sessions.exec(create(ExecRequestSchema, { session: uid, inputs: [userInput("over http")] })),
    );
    expect(updates[0]?.update.case).toBe("session");
    const streamed = updates.flatMap((u) => (u.update.case === "record" ? [u.update.value] : []));
    expect(streamed.length).toBeGreaterThan(0);
    const replayed = (await drain(f.sessions.replay({ session: uid }))).items;
    expect(replayed).toEqual(streamed);
    const outputs = updates.flatMap((u) => (u.update.case === "delta" ? [u.update.value.chunk] : []));
    expect(outputs.join("")).toContain("echo:over http");
  });

  it("theFinalShapeOverHttpIsOneMessagePerFrame: an Exec over Connect asking for `final` gets its records and the closing Session frame, each frame decoded whole", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const http = httpClients(f.server.httpUrl!);
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata!.uid;
    let echoed: string | null = null;
    const updates = await collect(
      http.sessions.exec(create(ExecRequestSchema, { session: uid, inputs: [userInput("packed over http")] }), {
        headers: { "x-harnesshost-exec-updates": "final" },
        onHeader: (headers) => {
          echoed = headers.get("x-harnesshost-exec-updates");
        },
      }),
    );
    expect(echoed).toBe("final");
    // No opening Session frame, no deltas: the turn's records, then exactly one closing Session frame.
    expect(updates.map((u) => u.update.case)).toEqual([...updates.slice(0, -1).map(() => "record"), "session"]);
    const streamed = updates.flatMap((u) => (u.update.case === "record" ? [u.update.value] : []));
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed).toEqual((await drain(f.sessions.replay({ session: uid }))).items);
    const closing = updates.at(-1)?.update;
    expect(closing?.case === "session" ? closing.value : undefined).toEqual(await f.sessions.getSession({ uid }));
  });

  it("sameStatusCodesAsGrpc: not found, invalid argument and failed precondition are the same codes on both listeners", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const http = httpClients(f.server.httpUrl!);
    const made = await f.sessions.createSession({ session: { harness: "echo" } });
    const uid = made.metadata!.uid;
    const cases: [() => Promise<unknown>, () => Promise<unknown>, number][] = [
      [
        () => f.sessions.getSession({ uid: "sess-nope" }),
        () => http.sessions.getSession({ uid: "sess-nope" }),
        GrpcStatus.NOT_FOUND,
      ],
      [
        () => f.sessions.fork({ session: uid, count: -1 }),
        () => http.sessions.fork({ session: uid, count: -1 }),
        GrpcStatus.INVALID_ARGUMENT,
      ],
      [
        () => f.sessions.approve({ session: uid, executionId: "e", toolCallId: "t", requestSeq: 1n, approved: true }),
        () =>
          http.sessions.approve({ session: uid, executionId: "e", toolCallId: "t", requestSeq: 1n, approved: true }),
        GrpcStatus.FAILED_PRECONDITION,
      ],
    ];
    for (const [grpcCall, httpCall, expected] of cases) {
      expect(await codeOf(grpcCall())).toBe(expected);
      expect(await connectCodeOf(httpCall())).toBe(expected);
    }
    // Nothing was changed by the refused calls.
    expect((await f.sessions.getSession({ uid })).lastSeq).toBe(0n);
  });

  it("sameBearerAuthAsGrpc: no token is UNAUTHENTICATED, a wrong one PERMISSION_DENIED, the right one passes; the request id is echoed", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0", tokens: ["s3cret-token"] }));
    const url = f.server.httpUrl!;
    expect(await connectCodeOf(httpClients(url).sessions.listSessions({}))).toBe(Code.Unauthenticated);
    expect(await connectCodeOf(httpClients(url, "wrong").sessions.listSessions({}))).toBe(Code.PermissionDenied);
    expect(await connectCodeOf(httpClients(url, "wrong").views.listWaiting({}))).toBe(Code.PermissionDenied);
    await httpClients(url, "s3cret-token").sessions.listSessions({});

    const refused = await raw(url, {
      method: "POST",
      path: "/agentsessions.v1.Sessions/ListSessions",
      headers: { "content-type": "application/json", authorization: "Bearer wrong", "x-request-id": "req-42" },
      body: "{}",
    });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ code: "permission_denied", message: "invalid bearer token" });
    expect(refused.headers["x-request-id"]).toBe("req-42");
    expect(f.logs.join("")).not.toContain("s3cret-token");
    // The console's files are public (they hold no data); the API behind them is not.
    expect((await raw(url, { path: "/" })).status).toBe(200);
  });

  it("registryIsReadOnlyOverHttp: list and get are served, register and retire are UNIMPLEMENTED and change nothing", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const http = httpClients(f.server.httpUrl!);
    const names = (await http.registry.listHarnesses({})).harnesses.map((h) => h.metadata?.name);
    expect(names).toContain("echo");
    expect((await http.registry.getHarness({ name: "echo" })).metadata?.name).toBe("echo");
    try {
      await http.registry.retireHarness({ name: "echo", reason: "x" });
      expect.unreachable();
    } catch (err) {
      const ce = ConnectError.from(err);
      expect(ce.code).toBe(Code.Unimplemented);
      expect(ce.rawMessage).toMatch(/read-only.*--registry-addr/);
    }
    expect(await connectCodeOf(http.registry.registerHarness({ name: "x" }))).toBe(Code.Unimplemented);
    expect((await f.registry.getHarness({ name: "echo" })).state).toBe(1);
  });

  it("noCrossOriginAndNoRebinding: another Origin, a non-loopback Host and a preflight get no way in", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const url = f.server.httpUrl!;
    const call = { method: "POST", path: "/agentsessions.v1.Sessions/ListSessions", body: "{}" };
    const json = { "content-type": "application/json" };
    expect((await raw(url, { ...call, headers: json })).status).toBe(200);
    const foreign = await raw(url, { ...call, headers: { ...json, origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined();
    const rebound = await raw(url, { ...call, headers: { ...json, host: `evil.example:${new URL(url).port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/not a loopback name/);
    const preflight = await raw(url, {
      method: "OPTIONS",
      path: call.path,
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    // The console itself is same-origin: its own Origin passes.
    const own = await raw(url, { ...call, headers: { ...json, origin: url.replace(/\/$/, "") } });
    expect(own.status).toBe(200);
  });

  it("httpListenPolicy: loopback only unless TLS + token, no shared port, off serves nothing", async () => {
    expect(() => checkListenAddresses("127.0.0.1:7233", "127.0.0.1:7234", false, "0.0.0.0:7235")).toThrow(
      /--http-addr .* loopback .* TLS/,
    );
    expect(() => checkListenAddresses("127.0.0.1:7233", "127.0.0.1:7234", true, "0.0.0.0:7235")).not.toThrow();
    expect(() => checkListenAddresses("127.0.0.1:7233", "127.0.0.1:7234", false, "127.0.0.1:7233")).toThrow(
      /must not share a port/,
    );
    expect(() => checkListenAddresses("127.0.0.1:7233", "127.0.0.1:7234", false, "unix:///tmp/x.sock")).toThrow(
      /host:port/,
    );
    expect(checkListenAddresses("127.0.0.1:7233", "127.0.0.1:7234", false, "off").http).toBeUndefined();
    const f = (fx = await startFixture({ httpAddr: "off" }));
    expect(f.server.httpUrl).toBeUndefined();
  });

  it("harnessOriginsSayWhereEachConfiguredHarnessComesFrom: built-in, a module's absolute path, a node's address", async () => {
    const module = join(import.meta.dirname, "../fixtures/harnesses/versioned-v1.ts");
    const f = (fx = await startFixture({
      httpAddr: "127.0.0.1:0",
      config: {
        harnesses: [
          parseHarnessFlag(`greeter=local:${relative(process.cwd(), module)}`),
          parseHarnessFlag("far=remote:unix:///tmp/hh-origins-nonexistent.sock"),
        ],
      },
    }));
    const { origins } = await httpClients(f.server.httpUrl!).views.listHarnessOrigins({});
    const by = new Map(origins.map((o) => [o.name, o]));
    expect(origins.map((o) => o.name)).toEqual([...by.keys()].sort());
    expect(by.get("greeter")).toMatchObject({ runtime: "local", builtin: false, module, address: "" });
    expect(by.get("far")).toMatchObject({
      runtime: "remote",
      builtin: false,
      module: "",
      address: "unix:///tmp/hh-origins-nonexistent.sock",
    });
    expect(by.get("echo")).toMatchObject({ runtime: "local", builtin: true, module: "", address: "" });
    expect(by.get("counter")).toMatchObject({ runtime: "spawned", builtin: true, module: "" });
  });

  it("consoleViews: the chain check, the inbox of waiting turns and the JSONL export", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const http = httpClients(f.server.httpUrl!);
    const first = await collect(http.sessions.exec({ harness: "ask", inputs: [userInput("ship it")] }));
    const parked = first.at(-1);
    expect(parked?.update.case).toBe("session");
    const uid = parked?.update.case === "session" ? parked.update.value.metadata!.uid : "";
    await collect(http.sessions.exec({ harness: "echo", inputs: [userInput("not waiting")] }));

    const inspected = await http.views.inspectSession({ session: uid });
    expect(inspected.chain?.ok).toBe(true);
    expect(inspected.chain?.headSeq).toBeGreaterThan(0n);

    const inbox = await http.views.listWaiting({});
    expect(inbox.nextPageToken).toBe("");
    expect(inbox.waiting.map((w) => w.session?.metadata?.uid)).toEqual([uid]);
    const [waiting] = inbox.waiting;
    const call = waiting?.toolCall?.event?.body;
    expect(call?.case === "tool" && call.value.tool).toBe("demo.write");
    expect(call?.case === "tool" && call.value.args).toEqual({ text: "ship it" });
    expect(waiting?.context.length).toBeGreaterThan(0);

    const child = (await http.sessions.fork({ session: uid, atSeq: 2n })).children[0]!;
    const again = await http.views.inspectSession({ session: uid });
    expect(again.children.map((c) => c.metadata?.uid)).toEqual([child.metadata?.uid]);

    const exported = (await collect(http.views.exportSession({ session: uid }))).map((c) => c.jsonl).join("");
    const expected: string[] = [];
    for await (const line of exportJsonl(f.host.journal, uid)) expected.push(`${line}\n`);
    expect(exported).toBe(expected.join(""));
    expect(await connectCodeOf(http.views.inspectSession({ session: "sess-nope" }))).toBe(Code.NotFound);
  });

  it("consoleAssetsAreAFixedSet: only the build's files are served, with a strict CSP; paths never reach the disk", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const url = f.server.httpUrl!;
    const index = await raw(url, { path: "/" });
    expect(index.status).toBe(200);
    expect(index.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(index.headers["x-content-type-options"]).toBe("nosniff");
    for (const path of ["/../package.json", "/assets/../../package.json", "/%2e%2e/package.json", "/src/index.ts"]) {
      const res = await raw(url, { path });
      expect(res.status, path).toBe(404);
    }
    expect(new ConsoleAssets(join(f.dir, "no-build")).built).toBe(false);
  });

  it("listWaitingIsBoundedAndResumable: one call looks at 500 sessions at most; its cursor goes on where it stopped, and every waiting turn is found once", async () => {
    const f = (fx = await startFixture({ httpAddr: "127.0.0.1:0" }));
    const http = httpClients(f.server.httpUrl!);
    const parked = await collect(http.sessions.exec({ harness: "ask", inputs: [userInput("needs a person")] }));
    const last = parked.at(-1);
    const uid = last?.update.case === "session" ? last.update.value.metadata!.uid : "";
    for (let i = 0; i < 600; i++)
      await f.host.journal.createSession({ uid: `sess-bulk-${i}`, project: "default", harness: "echo" });
    const first = await http.views.listWaiting({});
    expect(first.scanned).toBe(WAITING_SCAN);
    expect(first.nextPageToken).not.toBe("");
    const second = await http.views.listWaiting({ pageToken: first.nextPageToken });
    expect(second.nextPageToken).toBe("");
    expect(first.scanned + second.scanned).toBe(601);
    expect([...first.waiting, ...second.waiting].map((w) => w.session?.metadata?.uid)).toEqual([uid]);
  });
});
