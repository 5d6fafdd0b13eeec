// ExecRequest.expected_last_seq (docs/protocol.md §5.5 item 4) is judged once, against the head read
// under the session's lock — never against what the edge read before it held the session. Invariants:
// a client whose expected head went stale while its Exec was on the way is refused ABORTED (code
// conflict) with nothing written, even when the edge itself saw the old head; the check also guards
// Exec's recovery of a decided turn (an Exec without inputs after an approval), which runs as Resume.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, HarnessHostError, type HarnessHostClient } from "../../src/client/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage } from "../../src/controller/events.js";
import { openJournal } from "../../src/journal/index.js";
import type { Journal } from "../../src/journal/types.js";
import { startFixture, type Fixture } from "./helpers.js";

let fx: Fixture | undefined;
let client: HarnessHostClient | undefined;
let journalDir: string | undefined;
afterEach(async () => {
  client?.close();
  await fx?.close();
  if (journalDir) rmSync(journalDir, { recursive: true, force: true });
  fx = client = journalDir = undefined;
});

async function refusal(p: Promise<unknown>): Promise<HarnessHostError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof HarnessHostError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** A journal whose next getSession runs `hook` after reading the row, before answering (a stale answer). */
function withHookOnGetSession(inner: Journal): { journal: Journal; arm(hook: () => Promise<void>): void } {
  let armed: (() => Promise<void>) | undefined;
  const journal = new Proxy(inner, {
    get(target, prop) {
      if (prop === "getSession")
        return async (uid: string) => {
          const hook = armed;
          armed = undefined;
          const info = await target.getSession(uid);
          if (hook) await hook();
          return info;
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { journal, arm: (hook) => void (armed = hook) };
}

describe("expected_last_seq", () => {
  it("aStaleExpectedLastSeqIsRefusedUnderTheLockEvenWhenAnotherExecCommitsBetweenTheEdgesReadAndTheTurn", async () => {
    journalDir = mkdtempSync(join(tmpdir(), "hh-els-"));
    const hooked = withHookOnGetSession(await openJournal(join(journalDir, "journal.db")));
    fx = await startFixture({ overrides: { journal: hooked.journal } });
    const host = fx.host;
    client = connect({ address: fx.server.addr });
    const first = await client.sessions.exec({ input: "one" }).result();
    const session = first.session.metadata?.uid ?? "";
    const seen = first.lastSeq; // what the client (and, below, the edge) believes is the head

    // The edge reads the session (head `seen`), then another Exec commits a whole turn before this
    // Exec holds the session: the edge's view is stale by the time the turn would start.
    hooked.arm(async () => {
      await host.placer.exec({
        session,
        inputs: [textMessage("user", "between")],
        signal: new AbortController().signal,
      });
    });
    // Iterated (the `all` shape), so the edge reads the session before the turn; result() alone asks
    // for `final`, which reads it only under the hold (theFinalShapeReadsTheSessionOnlyUnderTheHold).
    const iterated = client.sessions.exec({ session, input: "two", expectedLastSeq: seen });
    const err = await refusal(
      (async () => {
        for await (const _ of iterated);
      })(),
    );
    expect(err.status).toBe("ABORTED");
    expect(err.code).toBe("conflict");
    const head = (await host.reads.head(session)).seq;
    expect(head).toBeGreaterThan(Number(seen));
    expect(err.message).toContain(`expected_last_seq ${seen} but the session's head is ${head}`);
    // Nothing of the refused Exec was written: the last turn is the one committed in between.
    const last = await host.reads.recordRange(session, head, head);
    expect(last[0]?.event.kind).toBe(EventKind.EVENT_END);
    const inputs = (await host.reads.recordRange(session, 1, head)).filter(
      (r) => r.event.kind === EventKind.EVENT_INPUT,
    );
    expect(inputs).toHaveLength(2);

    // The head read under the lock is the one that counts: naming it proceeds.
    const ok = await client.sessions.exec({ session, input: "two", expectedLastSeq: head }).result();
    expect(ok.outputs).toEqual(["echo:two"]);
  });

  it("theFinalShapeReadsTheSessionOnlyUnderTheHold", async () => {
    journalDir = mkdtempSync(join(tmpdir(), "hh-els-"));
    const reads: string[] = [];
    const inner = await openJournal(join(journalDir, "journal.db"));
    const counted = new Proxy(inner, {
      get(target, prop) {
        if (prop === "getSession")
          return async (uid: string) => {
            reads.push(new Error().stack?.includes("withLockedSession") ? "hold" : "other");
            return target.getSession(uid);
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    fx = await startFixture({ overrides: { journal: counted } });
    client = connect({ address: fx.server.addr });
    const session = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
    reads.length = 0;
    const done = await client.sessions.exec({ session, input: "one", expectedLastSeq: 0 }).result();
    expect(done.outputs).toEqual(["echo:one"]);
    // One read under the hold (the expected_last_seq check), one for the closing Session frame.
    expect(reads).toEqual(["hold", "other"]);
    reads.length = 0;
    const err = await refusal(client.sessions.exec({ session, input: "two", expectedLastSeq: 1 }).result());
    expect(err.code).toBe("conflict");
    expect(reads).toEqual(["hold"]);
  });

  it("aStaleExpectedLastSeqIsRefusedWhenExecRecoversADecidedTurn", async () => {
    fx = await startFixture();
    client = connect({ address: fx.server.addr });
    const parked = await client.sessions.exec({ harness: "ask", input: "hello" }).result();
    const session = parked.session.metadata?.uid ?? "";
    await client.sessions.approve({ session });
    const decided = (await client.sessions.get(session)).lastSeq;

    const err = await refusal(client.sessions.exec({ session, input: [], expectedLastSeq: decided - 1n }).result());
    expect(err.status).toBe("ABORTED");
    expect(err.code).toBe("conflict");
    expect((await client.sessions.get(session)).lastSeq).toBe(decided);

    const recovered = await client.sessions.exec({ session, input: [], expectedLastSeq: decided }).result();
    expect(recovered.outputs.join("\n")).toContain("approved");
  });
});
