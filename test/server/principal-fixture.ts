// Principals for the authorization tests: a token file with one principal per role scoped to project
// "a", a registrar, and a bare (old-format) token; and the same set of calls over gRPC and over HTTP,
// each answering with the status code it ended with and its details.
import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ConnectError, createClient as connectClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Console } from "../../src/gen/harnesshost/v1/console_pb.js";
import { SessionVersions } from "../../src/gen/harnesshost/v1/versions_pb.js";
import { createClient, RpcError } from "../../src/wire/index.js";
import type { Role } from "../../src/server/permissions.js";
import { userInput } from "./helpers.js";

export const ROLE_TOKENS: Readonly<Record<Role, string>> = {
  reader: "reader-token-aaaaaaaaaaaaaaaa",
  operator: "operator-token-bbbbbbbbbbbbbbbb",
  approver: "approver-token-cccccccccccccccc",
  admin: "admin-token-dddddddddddddddd",
};
export const REGISTRAR_TOKEN = "registrar-token-eeeeeeeeeeeeeeee";
export const LEGACY_TOKEN = "legacy-bare-token-ffffffffffffffff";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Writes the token file: `<role>-a` holds one role in project a; a registrar; a bare token line. */
export function writePrincipalFile(dir: string, extra = ""): string {
  const lines = [
    "# principals of the authorization tests",
    ...Object.entries(ROLE_TOKENS).map(
      ([role, t]) => `sha256:${sha256(t)} principal=${role}-a roles=${role} projects=a`,
    ),
    `sha256:${sha256(REGISTRAR_TOKEN)} registrar=deployer`,
    LEGACY_TOKEN,
    extra,
  ];
  const file = join(dir, "tokens");
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}

export type Outcome = { code: number; details: string };

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    await p;
    return { code: 0, details: "" };
  } catch (err) {
    if (err instanceof RpcError) return { code: err.grpcCode, details: err.details };
    const ce = ConnectError.from(err);
    return { code: ce.code, details: ce.rawMessage };
  }
}

/** The calls of the matrix on one session, each by name. */
export const SESSION_ACTIONS = [
  "get",
  "replay",
  "inspect",
  "export",
  "exec",
  "suspend",
  "resume",
  "fork",
  "cancel",
  "approve",
  "delete",
  "upgrade",
] as const;
export type SessionAction = (typeof SESSION_ACTIONS)[number];

/** The permission each action needs (the documented table, restated as the test's expectation). */
export const ACTION_PERMISSION: Readonly<Record<SessionAction, string>> = {
  get: "session.read",
  replay: "session.read",
  inspect: "session.read",
  export: "session.read",
  exec: "session.exec",
  suspend: "session.suspend",
  resume: "session.resume",
  fork: "session.fork",
  cancel: "session.cancel",
  approve: "session.decide",
  delete: "session.delete",
  upgrade: "session.upgrade",
};

export interface Caller {
  run(
    action: SessionAction,
    uid: string,
    tuple: { executionId: string; toolCallId: string; requestSeq: bigint },
  ): Promise<Outcome>;
  list(project?: string): Promise<{ uids: string[] }>;
  waiting(): Promise<string[]>;
  createIn(project: string): Promise<Outcome>;
  execNew(): Promise<string>;
  /** Console.WhoAmI's answer. */
  whoAmI(): Promise<WhoAmI>;
  close(): void;
}

export interface WhoAmI {
  readonly authenticated: boolean;
  readonly principal: string;
  readonly kind: string;
  readonly via: string;
  readonly roles: string[];
  readonly allProjects: boolean;
  readonly projects: string[];
  readonly permissions: string[];
}

/** Both transports' clients, seen through what the matrix calls (the same names and request shapes). */
interface LooseSessions {
  getSession(req: object): unknown;
  listSessions(req: object): unknown;
  createSession(req: object): unknown;
  deleteSession(req: object): unknown;
  exec(req: object): unknown;
  replay(req: object): unknown;
  approve(req: object): unknown;
  cancel(req: object): unknown;
  suspend(req: object): unknown;
  resume(req: object): unknown;
  fork(req: object): unknown;
}
interface LooseViews {
  inspectSession(req: object): unknown;
  exportSession(req: object): unknown;
  listWaiting(req: object): unknown;
  whoAmI(req: object): unknown;
}
interface Clients {
  readonly sessions: LooseSessions;
  readonly views: LooseViews;
  readonly versions: { upgrade(req: object): unknown };
  close(): void;
}

/** A unary call's promise, or a stream read to its end. */
async function settle(result: unknown): Promise<unknown> {
  if (typeof result === "object" && result !== null && Symbol.asyncIterator in result) {
    const items: unknown[] = [];
    for await (const item of result as AsyncIterable<unknown>) items.push(item);
    return items;
  }
  return result;
}

const ACTION_CALL: Readonly<
  Record<
    SessionAction,
    (c: Clients, uid: string, t: { executionId: string; toolCallId: string; requestSeq: bigint }) => unknown
  >
> = {
  get: (c, uid) => c.sessions.getSession({ uid }),
  replay: (c, uid) => c.sessions.replay({ session: uid }),
  inspect: (c, uid) => c.views.inspectSession({ session: uid }),
  export: (c, uid) => c.views.exportSession({ session: uid }),
  exec: (c, uid) => c.sessions.exec({ session: uid, inputs: [userInput("more")] }),
  suspend: (c, uid) => c.sessions.suspend({ session: uid }),
  resume: (c, uid) => c.sessions.resume({ session: uid }),
  fork: (c, uid) => c.sessions.fork({ session: uid, count: 1 }),
  cancel: (c, uid) => c.sessions.cancel({ session: uid, reason: "stop" }),
  approve: (c, uid, t) =>
    c.sessions.approve({ session: uid, ...t, approved: false, reason: "no", identity: { principal: "Q" } }),
  delete: (c, uid) => c.sessions.deleteSession({ uid }),
  upgrade: (c, uid) => c.versions.upgrade({ session: uid, toVersion: "2" }),
};

type SessionUpdate = { update: { case: string; value: { metadata?: { uid: string } } } };

function callerOver(c: Clients): Caller {
  return {
    run: (action, uid, t) => outcome(settle(ACTION_CALL[action](c, uid, t))),
    async list(project = "") {
      const res = (await c.sessions.listSessions({ project })) as { sessions: { metadata?: { uid: string } }[] };
      return { uids: res.sessions.map((s) => s.metadata?.uid ?? "") };
    },
    async waiting() {
      const res = (await c.views.listWaiting({})) as { waiting: { session?: { metadata?: { uid: string } } }[] };
      return res.waiting.map((w) => w.session?.metadata?.uid ?? "");
    },
    createIn: (project) =>
      outcome(settle(c.sessions.createSession({ session: { harness: "echo", metadata: { project } } }))),
    async execNew() {
      const updates = (await settle(
        c.sessions.exec({ harness: "echo", inputs: [userInput("hi")] }),
      )) as SessionUpdate[];
      const first = updates.find((u) => u.update.case === "session");
      return first?.update.value.metadata?.uid ?? "";
    },
    whoAmI: async () => (await c.views.whoAmI({})) as WhoAmI,
    close: () => c.close(),
  };
}

/** A caller over gRPC (Sessions port) with `token`. */
export function grpcCaller(addr: string, token: string): Caller {
  const md = { metadata: { authorization: `Bearer ${token}` } };
  const sessions = createClient(Sessions, addr, md);
  const views = createClient(Console, addr, md);
  const versions = createClient(SessionVersions, addr, md);
  return callerOver({
    sessions: sessions as unknown as LooseSessions,
    views: views as unknown as LooseViews,
    versions,
    close() {
      sessions.close();
      views.close();
      versions.close();
    },
  });
}

/** The same caller over the HTTP listener (Connect). */
export function httpCaller(url: string, token: string): Caller {
  const transport = createConnectTransport({
    baseUrl: url,
    httpVersion: "1.1",
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  });
  return callerOver({
    sessions: connectClient(Sessions, transport) as unknown as LooseSessions,
    views: connectClient(Console, transport) as unknown as LooseViews,
    versions: connectClient(SessionVersions, transport),
    close: () => undefined,
  });
}
