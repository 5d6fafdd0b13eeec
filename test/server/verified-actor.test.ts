// Verified actors (docs/protocol.md §19): a decision and an operator's lifecycle records name the
// authenticated principal; what the client asserted is kept only as "on behalf of" (subject) under
// it; get, replay, the JSONL export and the audit file show it; the chain covers it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { exportJsonl } from "../../src/journal/transfer/export.js";
import { createClient } from "../../src/wire/index.js";
import { eventually } from "../fixtures/eventually.js";
import { drain, startFixture, userInput, type Fixture } from "./helpers.js";
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
      const lines: string[] = [];
      for await (const line of exportJsonl(f.host.journal, gate.uid)) lines.push(line);
      const exported = lines.map((l) => JSON.parse(l) as { seq: string; event: { actor?: unknown } });
      expect(exported.find((l) => l.seq === String(res.decision?.seq))?.event.actor).toEqual(expected);
      expect((await f.host.journal.verify(gate.uid)).ok).toBe(true);
      type AuditLine = { session: string; event: string; detail: Record<string, unknown> };
      const deniedLine = (): AuditLine | undefined => {
        let text = "";
        try {
          text = readFileSync(auditFile(), "utf8");
        } catch {
          return undefined;
        }
        return text
          .trim()
          .split("\n")
          .filter((l) => l.endsWith("}"))
          .map((l) => JSON.parse(l) as AuditLine)
          .find((l) => l.session === gate.uid && l.event === "approval.denied");
      };
      await eventually("the decision's audit line", () => deniedLine() !== undefined);
      const audit = deniedLine();
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
});
