// Verified actors (docs/protocol.md §19): a decision and an operator's lifecycle records name the
// authenticated principal; what the client asserted is kept only as "on behalf of" (subject) under
// it; get, replay, the JSONL export and the audit file show it; the chain covers it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind, Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { exportJsonl } from "../../src/journal/transfer/export.js";
import { createClient } from "../../src/wire/index.js";
import { eventually } from "../fixtures/eventually.js";
import { drain, gatedEchoModel, startFixture, userInput, type Fixture } from "./helpers.js";
import { LEGACY_TOKEN, ROLE_TOKENS, writePrincipalFile } from "./principal-fixture.js";

let dir: string;
let f: Fixture;
const auditFile = () => join(dir, "audit.jsonl");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-actor-"));
  f = await startFixture({ tokenFile: writePrincipalFile(dir), config: { auditFile: join(dir, "audit.jsonl") } });
});
afterAll(async () => {
  await f.close();
  rmSync(dir, { recursive: true, force: true });
});

const as = (token: string) => createClient(Sessions, f.server.addr, { metadata: { authorization: `Bearer ${token}` } });

async function parkedIn(project: string) {
  const info = await f.host.createSession({ harness: "ask", project });
  const admin = as(LEGACY_TOKEN);
  await drain(admin.exec({ session: info.uid, inputs: [userInput("ship it")] }));
  const gate = (await admin.getSession({ uid: info.uid })).pendingApproval;
  admin.close();
  if (gate === undefined) throw new Error("the ask turn did not park");
  return { uid: info.uid, executionId: gate.executionId, toolCallId: gate.toolCallId, requestSeq: gate.requestSeq };
}

type AuditLine = { session: string; seq: number; event: string; detail: Record<string, unknown> };

/** The audit file's line of `event` on `session`, once it is written. */
async function auditLine(file: string, session: string, event: string): Promise<AuditLine | undefined> {
  const find = (): AuditLine | undefined => {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
    return text
      .trim()
      .split("\n")
      .filter((l) => l.endsWith("}"))
      .map((l) => JSON.parse(l) as AuditLine)
      .find((l) => l.session === session && l.event === event);
  };
  await eventually(`the ${event} audit line`, () => find() !== undefined);
  return find();
}

/** The session's records as `harnesshost export` writes them. */
async function exported(uid: string) {
  const lines: string[] = [];
  for await (const line of exportJsonl(f.host.journal, uid)) lines.push(line);
  return lines.map((l) => JSON.parse(l) as { seq: string; event: { actor?: unknown } });
}

const OPERATOR = { principal: "operator-a", issuer: "harnesshost:token", subject: "" };
/** The same actor in proto3 JSON (an empty subject is left out). */
const OPERATOR_JSON = { principal: "operator-a", issuer: "harnesshost:token" };

describe("verified actors", () => {
  it("aDecisionNamesTheAuthenticatedPrincipalAndKeepsTheClaimOnlyAsOnBehalfOf", async () => {
    const gate = await parkedIn("a");
    const approver = as(ROLE_TOKENS.approver);
    try {
      const claim = { principal: "Q", issuer: "https://idp.example", subject: "q-123" };
      const res = await approver.approve({
        session: gate.uid,
        ...gate,
        approved: false,
        reason: "no",
        identity: claim,
      });
      const expected = { principal: "approver-a", issuer: "harnesshost:token", subject: "Q" };
      expect(res.decision?.event?.actor).toMatchObject(expected);
      // An exact retry (same claim) is the same record; the journal, replay and export agree.
      const again = await approver.approve({
        session: gate.uid,
        ...gate,
        approved: false,
        reason: "no",
        identity: claim,
      });
      expect(again.decision?.seq).toBe(res.decision?.seq);
      const replayed = (await drain(approver.replay({ session: gate.uid }))).items;
      expect(replayed.find((r) => r.seq === res.decision?.seq)?.event?.actor).toMatchObject(expected);
      expect((await exported(gate.uid)).find((l) => l.seq === String(res.decision?.seq))?.event.actor).toEqual(
        expected,
      );
      expect((await f.host.journal.verify(gate.uid)).ok).toBe(true);
      const audit = await auditLine(auditFile(), gate.uid, "approval.denied");
      expect(audit?.detail).toMatchObject({
        actor: "approver-a",
        actor_issuer: "harnesshost:token",
        on_behalf_of: "Q",
      });
    } finally {
      approver.close();
    }
  });

  it("aClaimOfOnesOwnNameIsNoOnBehalfOfAndABareTokensPrincipalIsItsDigestPrefix", async () => {
    const mine = await parkedIn("a");
    const approver = as(ROLE_TOKENS.approver);
    const legacy = as(LEGACY_TOKEN);
    try {
      const own = await approver.approve({
        session: mine.uid,
        ...mine,
        approved: false,
        reason: "no",
        identity: { principal: "approver-a" },
      });
      expect(own.decision?.event?.actor).toMatchObject({ principal: "approver-a", subject: "" });
      const other = await parkedIn("b");
      const byLegacy = await legacy.approve({ session: other.uid, ...other, approved: false, reason: "no" });
      expect(byLegacy.decision?.event?.actor?.principal).toMatch(/^token:[0-9a-f]{8}$/);
      expect(JSON.stringify(byLegacy.decision?.event?.actor)).not.toContain(LEGACY_TOKEN);
    } finally {
      approver.close();
      legacy.close();
    }
  });

  it("lifecycleRecordsNameTheOperatorWhoAskedForThem: suspend and resume", async () => {
    const info = await f.host.createSession({ harness: "echo", project: "a" });
    const operator = as(ROLE_TOKENS.operator);
    try {
      await drain(operator.exec({ session: info.uid, inputs: [userInput("hi")] }));
      await operator.suspend({ session: info.uid });
      await operator.resume({ session: info.uid });
      const records = (await drain(operator.replay({ session: info.uid }))).items;
      const lifecycle = records.filter((r) => r.event?.body.case === "lifecycle");
      const kinds = lifecycle.map((r) => (r.event?.body.case === "lifecycle" ? r.event.body.value.kind : undefined));
      expect(kinds).toEqual([Lifecycle_Kind.LIFECYCLE_SUSPEND, Lifecycle_Kind.LIFECYCLE_RESUME]);
      for (const r of lifecycle)
        expect(r.event?.actor).toMatchObject({ principal: "operator-a", issuer: "harnesshost:token", subject: "" });
      expect((await f.host.journal.verify(info.uid)).ok).toBe(true);
    } finally {
      operator.close();
    }
  });

  it("anExecsFirstRecordAndAForkMarkerNameWhoAskedForThem", async () => {
    const operator = as(ROLE_TOKENS.operator);
    try {
      const info = await f.host.createSession({ harness: "echo", project: "a" });
      await drain(operator.exec({ session: info.uid, inputs: [userInput("hi")] }));
      const [start] = (await drain(operator.replay({ session: info.uid }))).items;
      expect(start?.event?.kind).toBe(EventKind.EVENT_EXECUTION_START);
      expect(start?.event?.actor).toMatchObject(OPERATOR);
      expect((await exported(info.uid))[0]?.event.actor).toEqual(OPERATOR_JSON);
      const fork = await operator.fork({ session: info.uid, count: 1 });
      const child = fork.children[0]?.metadata?.uid ?? "";
      const marker = (await drain(operator.replay({ session: child }))).items.at(-1);
      expect(marker?.event?.body.case === "lifecycle" && marker.event.body.value.kind).toBe(
        Lifecycle_Kind.LIFECYCLE_FORK,
      );
      expect(marker?.event?.actor).toMatchObject(OPERATOR);
      expect((await exported(child)).at(-1)?.event.actor).toEqual(OPERATOR_JSON);
      expect((await f.host.journal.verify(info.uid)).ok).toBe(true);
      expect((await f.host.journal.verify(child)).ok).toBe(true);
    } finally {
      operator.close();
    }
  });

  it("aDeleteLeavesAnAuditLineNamingWhoDeleted", async () => {
    const info = await f.host.createSession({ harness: "echo", project: "a" });
    const admin = as(ROLE_TOKENS.admin);
    try {
      await drain(admin.exec({ session: info.uid, inputs: [userInput("hi")] }));
      const head = Number((await admin.getSession({ uid: info.uid })).lastSeq);
      await admin.deleteSession({ uid: info.uid });
      const line = await auditLine(auditFile(), info.uid, "session.deleted");
      expect(line?.seq).toBe(head);
      expect(line?.detail).toEqual({ last_seq: head, actor: "admin-a", actor_issuer: "harnesshost:token" });
    } finally {
      admin.close();
    }
  });
});

describe("a Cancel's actor", () => {
  let cdir: string;
  let g: Fixture;
  const gate = gatedEchoModel();
  beforeAll(async () => {
    cdir = mkdtempSync(join(tmpdir(), "hh-actor-cancel-"));
    g = await startFixture({ tokenFile: writePrincipalFile(cdir), overrides: { model: gate.model } });
  });
  afterAll(async () => {
    gate.release();
    await g.close();
    rmSync(cdir, { recursive: true, force: true });
  });

  it("aCancelledRunningTurnsErrorNamesWhoCancelledIt", async () => {
    const operator = createClient(Sessions, g.server.addr, {
      metadata: { authorization: `Bearer ${ROLE_TOKENS.operator}` },
    });
    try {
      const uid = (await operator.createSession({})).metadata?.uid ?? "";
      const turn = drain(operator.exec({ session: uid, inputs: [userInput("long")] }));
      await gate.entered;
      await operator.cancel({ session: uid, reason: "stop" });
      await turn;
      const last = (await drain(operator.replay({ session: uid }))).items.at(-1);
      expect(last?.event?.kind).toBe(EventKind.EVENT_ERROR);
      expect(last?.event?.body.case === "error" && last.event.body.value.description).toBe(
        "turn cancelled by Cancel: stop",
      );
      expect(last?.event?.actor).toMatchObject(OPERATOR);
      expect((await g.host.journal.verify(uid)).ok).toBe(true);
    } finally {
      operator.close();
    }
  });
});
