// Principals, roles and projects (docs/operations.md "Principals, roles and projects"): the matrix of
// role × call × own/other project over gRPC and HTTP, nothing changed by a refusal, lists and the
// inbox bounded by the project, fork children kept in it, the old token file still working, and the
// refusal metric.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { ROLE_PERMISSIONS, ROLES, type Role } from "../../src/server/permissions.js";
import { createClient } from "../../src/wire/index.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "./helpers.js";
import {
  ACTION_PERMISSION,
  type Caller,
  grpcCaller,
  httpCaller,
  LEGACY_TOKEN,
  REGISTRAR_TOKEN,
  ROLE_TOKENS,
  SESSION_ACTIONS,
  writePrincipalFile,
} from "./principal-fixture.js";

let dir: string;
let f: Fixture;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-principals-"));
  f = await startFixture({ tokenFile: writePrincipalFile(dir), httpAddr: "127.0.0.1:0" });
});
afterAll(async () => {
  await f.close();
  rmSync(dir, { recursive: true, force: true });
});

const admin = () => createClient(Sessions, f.server.addr, { metadata: { authorization: `Bearer ${LEGACY_TOKEN}` } });

/** A session of `project` parked on a question, and its gate's tuple. */
async function parked(project: string) {
  const info = await f.host.createSession({ harness: "ask", project });
  const client = admin();
  try {
    const run = await drain(client.exec({ session: info.uid, inputs: [userInput("ship it")] }));
    expect(run.error).toBeUndefined();
    const gate = (await client.getSession({ uid: info.uid })).pendingApproval;
    if (gate === undefined) throw new Error("the ask turn did not park");
    return {
      uid: info.uid,
      tuple: { executionId: gate.executionId, toolCallId: gate.toolCallId, requestSeq: gate.requestSeq },
    };
  } finally {
    client.close();
  }
}

/** What a refused call must leave unchanged: the session's head and the project's sessions. */
async function stateOf(uid: string, project: string) {
  const info = await f.host.journal.getSession(uid);
  const head = info ? await f.host.journal.head(uid) : undefined;
  const list = await f.host.journal.listSessions({ project, pageSize: 500, pageToken: "" });
  return { exists: info !== undefined, head, sessions: list.sessions.map((s) => s.uid).sort() };
}

const transports: [string, (token: string) => Caller][] = [
  ["grpc", (t) => grpcCaller(f.server.addr, t)],
  ["http", (t) => httpCaller(f.server.httpUrl ?? "", t)],
];

describe.each(transports)("over %s", (_name, callerWith) => {
  it.each(ROLES)(
    "eachRoleGetsTheDocumentedAnswerOnEachCallInItsOwnAndAnotherProject: %s",
    async (role: Role) => {
      const caller = callerWith(ROLE_TOKENS[role]);
      const other = await parked("b");
      try {
        for (const action of SESSION_ACTIONS) {
          const permission = ACTION_PERMISSION[action];
          const allowed = (ROLE_PERMISSIONS[role] as readonly string[]).includes(permission);
          const otherBefore = await stateOf(other.uid, "b");
          const elsewhere = await caller.run(action, other.uid, other.tuple);
          if (allowed) {
            // Exactly what a session that does not exist answers: existence does not leak.
            expect(elsewhere, `${role} ${action} in b`).toEqual({
              code: GrpcStatus.NOT_FOUND,
              details: `session ${other.uid} not found`,
            });
          } else {
            expect(elsewhere.code, `${role} ${action} in b`).toBe(GrpcStatus.PERMISSION_DENIED);
            expect(elsewhere.details).toContain(permission);
          }
          expect(await stateOf(other.uid, "b"), `${role} ${action} changed b`).toEqual(otherBefore);

          const own = await parked("a");
          const ownBefore = await stateOf(own.uid, "a");
          const here = await caller.run(action, own.uid, own.tuple);
          if (allowed) {
            expect(here.code, `${role} ${action} in a: ${here.details}`).not.toBe(GrpcStatus.PERMISSION_DENIED);
            expect(here.details, `${role} ${action} in a`).not.toMatch(/session .* not found/);
          } else {
            expect(here.code, `${role} ${action} in a`).toBe(GrpcStatus.PERMISSION_DENIED);
            expect(here.details).toBe(
              `principal ${role}-a lacks permission ${permission} (needed by ${pathOf(action)})`,
            );
            expect(await stateOf(own.uid, "a"), `${role} ${action} changed a`).toEqual(ownBefore);
          }
        }
      } finally {
        caller.close();
      }
    },
    120_000,
  );

  it("whoAmINamesTheCallersPrincipalRolesProjectsAndPermissionsAndNoToken", async () => {
    for (const role of ROLES) {
      const caller = callerWith(ROLE_TOKENS[role]);
      try {
        const me = await caller.whoAmI();
        expect(me).toMatchObject({
          authenticated: true,
          principal: `${role}-a`,
          kind: "user",
          via: "token",
          roles: [role],
          allProjects: false,
          projects: ["a"],
        });
        expect(me.permissions).toEqual([...ROLE_PERMISSIONS[role]].sort());
        expect(JSON.stringify(me)).not.toContain(ROLE_TOKENS[role]);
      } finally {
        caller.close();
      }
    }
    const registrar = callerWith(REGISTRAR_TOKEN);
    const legacy = callerWith(LEGACY_TOKEN);
    try {
      expect(await registrar.whoAmI()).toMatchObject({ principal: "deployer", kind: "registrar", roles: [] });
      expect(await legacy.whoAmI()).toMatchObject({ roles: ["admin"], allProjects: true, projects: [] });
    } finally {
      registrar.close();
      legacy.close();
    }
  });

  it("aRegistrarCredentialHoldsNoSessionPermission: every session call is PERMISSION_DENIED and changes nothing", async () => {
    const caller = callerWith(REGISTRAR_TOKEN);
    const own = await parked("a");
    try {
      for (const action of SESSION_ACTIONS) {
        const before = await stateOf(own.uid, "a");
        const res = await caller.run(action, own.uid, own.tuple);
        expect(res.code, action).toBe(GrpcStatus.PERMISSION_DENIED);
        expect(res.details).toContain(`principal deployer lacks permission ${ACTION_PERMISSION[action]}`);
        expect(await stateOf(own.uid, "a")).toEqual(before);
      }
    } finally {
      caller.close();
    }
  });

  it("aProjectScopedPrincipalListsAndWaitsOnlyInItsProjectAndCreatesOnlyThere", async () => {
    const a = await parked("a");
    const b = await parked("b");
    const reader = callerWith(ROLE_TOKENS.reader);
    const operator = callerWith(ROLE_TOKENS.operator);
    try {
      const listed = (await reader.list()).uids;
      expect(listed).toContain(a.uid);
      expect(listed).not.toContain(b.uid);
      expect((await reader.list("b")).uids).toEqual([]);
      const waiting = await reader.waiting();
      expect(waiting).toContain(a.uid);
      expect(waiting).not.toContain(b.uid);
      // A new session lands in the caller's project; another project is refused and nothing is made.
      const made = await operator.execNew();
      expect((await f.host.getSession(made)).project).toBe("a");
      const before = await stateOf(b.uid, "b");
      const refused = await operator.createIn("b");
      expect(refused.code).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(refused.details).toContain('project "b"');
      expect(await stateOf(b.uid, "b")).toEqual(before);
    } finally {
      reader.close();
      operator.close();
    }
  });
});

function pathOf(action: (typeof SESSION_ACTIONS)[number]): string {
  const method: Record<(typeof SESSION_ACTIONS)[number], string> = {
    get: "agentsessions.v1.Sessions/GetSession",
    replay: "agentsessions.v1.Sessions/Replay",
    inspect: "harnesshost.v1.Console/InspectSession",
    export: "harnesshost.v1.Console/ExportSession",
    exec: "agentsessions.v1.Sessions/Exec",
    suspend: "agentsessions.v1.Sessions/Suspend",
    resume: "agentsessions.v1.Sessions/Resume",
    fork: "agentsessions.v1.Sessions/Fork",
    cancel: "agentsessions.v1.Sessions/Cancel",
    approve: "agentsessions.v1.Sessions/Approve",
    delete: "agentsessions.v1.Sessions/DeleteSession",
    upgrade: "harnesshost.v1.SessionVersions/Upgrade",
  };
  return `/${method[action]}`;
}

describe("principals", () => {
  it("forkChildrenStayInTheParentsProject", async () => {
    const parent = await f.host.createSession({ harness: "echo", project: "a" });
    const operator = createClient(Sessions, f.server.addr, {
      metadata: { authorization: `Bearer ${ROLE_TOKENS.operator}` },
    });
    try {
      await drain(operator.exec({ session: parent.uid, inputs: [userInput("hi")] }));
      const forked = await operator.fork({ session: parent.uid, count: 2 });
      expect(forked.children.map((c) => c.metadata?.project)).toEqual(["a", "a"]);
    } finally {
      operator.close();
    }
  });

  it("aScopedCallReadsTheSessionOnceForItsProjectCheckAndItsOperation", async () => {
    const info = await f.host.createSession({ harness: "echo", project: "a" });
    const other = await f.host.createSession({ harness: "echo", project: "b" });
    const operator = createClient(Sessions, f.server.addr, {
      metadata: { authorization: `Bearer ${ROLE_TOKENS.operator}` },
    });
    const unscoped = admin();
    const reads = vi.spyOn(f.host.journal, "getSession");
    try {
      await drain(operator.exec({ session: info.uid, inputs: [userInput("hi")] }));
      // Exec: the scoped caller's turn reads the row as often as an unscoped caller's (the project
      // check rides the turn's own lookup; nothing is read for it alone).
      reads.mockClear();
      expect((await drain(unscoped.exec({ session: info.uid, inputs: [userInput("again")] }))).error).toBeUndefined();
      const unscopedReads = reads.mock.calls.length;
      reads.mockClear();
      expect((await drain(operator.exec({ session: info.uid, inputs: [userInput("again")] }))).error).toBeUndefined();
      expect(reads).toHaveBeenCalledTimes(unscopedReads);
      reads.mockClear();
      // GetSession: one read serves the check and the answer.
      await operator.getSession({ uid: info.uid });
      expect(reads).toHaveBeenCalledTimes(1);
      // Suspend: the operation's own read under its hold (the project already known), then the answer.
      reads.mockClear();
      await operator.suspend({ session: info.uid });
      expect(reads.mock.calls.map(([uid]) => uid)).toEqual([info.uid, info.uid]);
      // Another project's session: NOT_FOUND after one read, before anything is held.
      reads.mockClear();
      expect(await codeOf(operator.suspend({ session: other.uid }))).toBe(GrpcStatus.NOT_FOUND);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
      operator.close();
      unscoped.close();
    }
  });

  it("theOldTokenFileStillWorks: a bare token line is an admin in every project", async () => {
    const client = admin();
    try {
      const run = await drain(client.exec({ harness: "echo", inputs: [userInput("hi")] }));
      expect(run.error).toBeUndefined();
      const b = await parked("b");
      expect((await client.getSession({ uid: b.uid })).metadata?.project).toBe("b");
      expect((await client.deleteSession({ uid: b.uid })).metadata?.uid).toBe(b.uid);
    } finally {
      client.close();
    }
  });

  it("registryCallsFollowTheTable: a registrar lists and retires but may not free; a reader may only read", async () => {
    const as = (token: string) =>
      createClient(HarnessRegistry, f.server.registryAddr, { metadata: { authorization: `Bearer ${token}` } });
    const registrar = as(REGISTRAR_TOKEN);
    const reader = as(ROLE_TOKENS.reader);
    try {
      expect((await registrar.listHarnesses({})).harnesses.length).toBeGreaterThan(0);
      expect((await reader.listHarnesses({})).harnesses.length).toBeGreaterThan(0);
      expect(await codeOf(reader.retireHarness({ name: "nope", reason: "x" }))).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(await codeOf(registrar.freeHarness({ name: "nope" }))).toBe(GrpcStatus.PERMISSION_DENIED);
      // Allowed: the registry's own answer about an unknown name.
      expect(await codeOf(registrar.retireHarness({ name: "nope", reason: "x" }))).toBe(GrpcStatus.NOT_FOUND);
    } finally {
      registrar.close();
      reader.close();
    }
  });

  it("refusalsAreCountedByPermissionNeverByCredential", async () => {
    const reader = grpcCaller(f.server.addr, ROLE_TOKENS.reader);
    try {
      const own = await parked("a");
      await reader.run("delete", own.uid, own.tuple);
      const text = await f.host.hostMetrics?.render();
      expect(text).toMatch(/harnesshost_auth_refusals_total\{permission="session\.delete"\} [1-9]/);
      expect(text).not.toContain(ROLE_TOKENS.reader);
      expect(f.logs.join("")).not.toContain(ROLE_TOKENS.reader);
    } finally {
      reader.close();
    }
  });
});
