// Server-side session filters (issue 18): harnesshost.v1.Console.ListSessions narrows a project's
// sessions by harness, compute state and parent on the host, the same on the gRPC port and the HTTP
// listener (one handler); the typed client's list and `harnesshost list --harness/--state/--turn/--parent`
// (in process on the journal, and --server) ask for it; an unknown state word is INVALID_ARGUMENT
// naming it. The wire's ListSessions request is untouched.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient as connectClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { connect, HarnessHostError, type HarnessHostClient } from "../../src/client/index.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ComputeState, type Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Console, type ListSessionsRequestSchema } from "../../src/gen/harnesshost/v1/console_pb.js";
import { Host } from "../../src/host/host.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { createClient, type MethodsOf, type ServiceClient } from "../../src/wire/index.js";
import { codeOf } from "./helpers.js";

let dir: string;
let host: Host;
let server: RunningServer;
let client: HarnessHostClient;
let grpcViews: ServiceClient<MethodsOf<typeof Console>>;
let httpViews: ReturnType<typeof connectClient<typeof Console>>;
const uid: Record<"live" | "cold" | "fresh" | "counter" | "child", string> = {
  live: "",
  cold: "",
  fresh: "",
  counter: "",
  child: "",
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-filters-"));
  host = await Host.open({ dataDir: dir, nodeIdleMs: 0 });
  server = await startServer(host, {
    addr: "127.0.0.1:0",
    registryAddr: "127.0.0.1:0",
    httpAddr: "127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
  client = connect({ address: server.addr });
  grpcViews = createClient(Console, server.addr);
  httpViews = connectClient(Console, createConnectTransport({ baseUrl: server.httpUrl ?? "", httpVersion: "1.1" }));
  uid.live = (await client.sessions.exec({ harness: "echo", input: "a" }).result()).session.metadata?.uid ?? "";
  uid.cold = (await client.sessions.exec({ harness: "echo", input: "b" }).result()).session.metadata?.uid ?? "";
  await client.sessions.suspend(uid.cold);
  uid.fresh = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
  uid.counter = (await client.sessions.create({ harness: "counter" })).metadata?.uid ?? "";
  const [child] = await client.sessions.fork({ session: uid.live, count: 1 });
  uid.child = child?.metadata?.uid ?? "";
});

afterAll(async () => {
  client?.close();
  grpcViews?.close();
  await server?.close(1000);
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

type ListReq = MessageInitShape<typeof ListSessionsRequestSchema>;

const uids = (list: readonly Session[]): string[] => list.map((s) => s.metadata?.uid ?? "").sort();

/** Every page of a filtered list over one transport. */
async function walk(
  list: (req: ListReq) => Promise<{ sessions: Session[]; nextPageToken: string }>,
  req: ListReq,
): Promise<Session[]> {
  const out: Session[] = [];
  let pageToken = "";
  do {
    const page = await list({ ...req, pageToken });
    out.push(...page.sessions);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return out;
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const listedUids = (out: string): string[] =>
  out
    .split("\n")
    .flatMap((l) => /^session (sess-[0-9a-f]{24}) /.exec(l)?.[1] ?? [])
    .sort();

describe("server-side session filters", () => {
  it("consoleListSessionsFiltersOnTheHostOnBothTransports: harness, state and parent narrow the list; gRPC and HTTP answer the same", async () => {
    const all = await walk((r) => client.sessions.listPage(r), {});
    expect(all).toHaveLength(5);
    const cases: [ListReq, (s: Session) => boolean][] = [
      [{ harness: "echo" }, (s) => s.harness === "echo"],
      [{ harness: "counter" }, (s) => s.harness === "counter"],
      [{ states: ["cold"] }, (s) => s.computeState === ComputeState.COMPUTE_COLD],
      [
        { states: ["NONE", "live"] },
        (s) => [ComputeState.COMPUTE_NONE, ComputeState.COMPUTE_LIVE].includes(s.computeState),
      ],
      [
        { harness: "echo", states: ["none"] },
        (s) => s.harness === "echo" && s.computeState === ComputeState.COMPUTE_NONE,
      ],
      [{ parentUid: uid.live }, (s) => s.parentUid === uid.live],
      [{ harness: "nope" }, () => false],
    ];
    for (const [req, matches] of cases) {
      const expected = uids(all.filter(matches));
      // Pages of one session each: the cursor carries the filter exactly, nothing skipped or repeated.
      const overGrpc = await walk((r) => grpcViews.listSessions(r), { ...req, pageSize: 1 });
      const overHttp = await walk((r) => httpViews.listSessions(r), { ...req, pageSize: 1 });
      expect(uids(overGrpc), JSON.stringify(req)).toEqual(expected);
      expect(overHttp).toEqual(overGrpc);
    }
    // The cases are not vacuous.
    expect(uids(all.filter((s) => s.computeState === ComputeState.COMPUTE_COLD))).toContain(uid.cold);
    expect(uids(all.filter((s) => s.parentUid === uid.live))).toEqual([uid.child]);
    expect(uids(all.filter((s) => s.harness === "echo" && s.computeState === ComputeState.COMPUTE_NONE))).toEqual([
      uid.fresh,
    ]);
  });

  it("unknownStateIsInvalidArgumentNamingIt: on both transports, with the words that exist", async () => {
    const err = await grpcViews.listSessions({ states: ["live", "parked"] }).catch((e: unknown) => e);
    expect(await codeOf(Promise.reject(err))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(String((err as Error).message)).toContain(
      'unknown state "parked" (states are none, live, warm, cold, terminated)',
    );
    const httpErr = ConnectError.from(await httpViews.listSessions({ states: ["parked"] }).catch((e: unknown) => e));
    expect(httpErr.code).toBe(Code.InvalidArgument);
    expect(httpErr.rawMessage).toContain('unknown state "parked"');
  });

  it("clientListTakesTheFilters: list iterates every matching page; a bad word is a HarnessHostError", async () => {
    const listed: Session[] = [];
    for await (const s of client.sessions.list({ harness: "echo", states: ["COLD", "live"], pageSize: 1 }))
      listed.push(s);
    const all = await walk((r) => client.sessions.listPage(r), {});
    const expected = all.filter(
      (s) => s.harness === "echo" && [ComputeState.COMPUTE_COLD, ComputeState.COMPUTE_LIVE].includes(s.computeState),
    );
    expect(uids(listed)).toEqual(uids(expected));
    expect(uids(listed)).toContain(uid.cold);
    const children: Session[] = [];
    for await (const s of client.sessions.list({ parentUid: uid.live })) children.push(s);
    expect(uids(children)).toEqual([uid.child]);
    const err = await client.sessions.listPage({ states: ["asleep"] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarnessHostError);
    expect(err).toMatchObject({ code: "invalid_argument", status: "INVALID_ARGUMENT" });
    expect((err as Error).message).toContain('"asleep"');
  });

  it("cliListFiltersInProcessAndOverTheServer: --harness, --state (repeated or a comma list) and --parent; an unknown state exits 2", async () => {
    const all = await walk((r) => client.sessions.listPage(r), {});
    const expected = uids(
      all.filter(
        (s) => s.harness === "echo" && [ComputeState.COMPUTE_COLD, ComputeState.COMPUTE_NONE].includes(s.computeState),
      ),
    );
    for (const where of [
      ["--server", server.addr],
      ["--journal", join(dir, "journal.db")],
    ]) {
      const comma = await cli("list", ...where, "--harness", "echo", "--state", "cold,none");
      expect(comma.code, comma.err).toBe(0);
      expect(listedUids(comma.out)).toEqual(expected);
      const repeated = await cli("list", ...where, "--harness", "echo", "--state", "cold", "--state", "none", "--json");
      expect(repeated.code, repeated.err).toBe(0);
      const doc = JSON.parse(repeated.out) as { sessions: { uid?: string; metadata?: { uid: string } }[] };
      expect(doc.sessions).toHaveLength(expected.length);
      const children = await cli("list", ...where, "--parent", uid.live);
      expect(listedUids(children.out)).toEqual([uid.child]);
      const bad = await cli("list", ...where, "--state", "parked");
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('unknown state "parked"');
    }
  });

  it("consoleListSessionsFiltersByTurnStatus: waiting and decided turns are found page by page on both transports and by `list --turn`; an unknown status is INVALID_ARGUMENT naming it (exit 2 in the CLI)", async () => {
    const waiting = (await client.sessions.exec({ harness: "ask", input: "x" }).result()).session.metadata?.uid ?? "";
    const decided = (await client.sessions.exec({ harness: "ask", input: "y" }).result()).session.metadata?.uid ?? "";
    await client.sessions.approve({ session: decided });
    const all = await walk((r) => client.sessions.listPage(r), {});
    const statusOf = (s: Session): string =>
      (JSON.parse(s.annotations["harnesshost.dev/turn"] ?? "{}") as { status?: string }).status ?? "";
    for (const turns of [["awaiting"], ["decided", "interrupted"], ["completed"], ["new"]]) {
      const expected = uids(all.filter((s) => turns.includes(statusOf(s))));
      expect(expected.length, turns.join()).toBeGreaterThan(0);
      const overGrpc = await walk((r) => grpcViews.listSessions(r), { turns, pageSize: 1 });
      const overHttp = await walk((r) => httpViews.listSessions(r), { turns, pageSize: 1 });
      expect(uids(overGrpc), turns.join()).toEqual(expected);
      expect(uids(overHttp)).toEqual(expected);
    }
    expect(uids(await walk((r) => grpcViews.listSessions(r), { turns: ["awaiting"] }))).toEqual([waiting]);
    expect(uids(await walk((r) => grpcViews.listSessions(r), { turns: ["DECIDED"] }))).toEqual([decided]);
    const viaClient: Session[] = [];
    for await (const s of client.sessions.list({ turns: ["awaiting", "decided"], harness: "ask", pageSize: 1 }))
      viaClient.push(s);
    expect(uids(viaClient)).toEqual([waiting, decided].sort());
    for (const where of [
      ["--server", server.addr],
      ["--journal", join(dir, "journal.db")],
    ]) {
      const listed = await cli("list", ...where, "--turn", "awaiting,decided", "--harness", "ask");
      expect(listed.code, listed.err).toBe(0);
      expect(listedUids(listed.out)).toEqual([waiting, decided].sort());
      const repeated = await cli("list", ...where, "--turn", "awaiting", "--turn", "decided", "--json");
      expect(repeated.code, repeated.err).toBe(0);
      expect((JSON.parse(repeated.out) as { sessions: unknown[] }).sessions).toHaveLength(2);
      const bad = await cli("list", ...where, "--turn", "parked");
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('unknown turn status "parked"');
    }
    const err = await grpcViews.listSessions({ turns: ["parked"] }).catch((e: unknown) => e);
    expect(await codeOf(Promise.reject(err))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(String((err as Error).message)).toContain('unknown turn status "parked"');
  });
});
