// The notes example agent end to end against the fake OpenAI-compatible endpoint (docs/agents.md): a
// tool call, an operator's approval, the write done exactly once, compaction after the threshold,
// forks before and after a compaction, and replay identical with zero model calls.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactionOfEvent } from "../../src/projection/compaction.js";
import { SessionLog } from "../../src/controller/index.js";
import { appliedWrites, sandboxDir } from "../../harnesses/notes/tools.js";
import { messageText, textMessage } from "../../src/model/text.js";
import type { Host } from "../../src/host/host.js";
import { ChatEndpoint, contentText } from "../fixtures/chat-endpoint.js";
import { notesModel } from "../fixtures/notes-model.js";
import { calls, say, ScriptedModel } from "../../src/model/scripted.js";
import { ErrorCode } from "../../src/errors/index.js";
import { sessionView } from "../../src/host/session-proto.js";
import { COMPACTION_ANNOTATION } from "../../src/wire/annotations.js";
import { childMetas, closeAll, openTestHost, records, rejectsWithCode, signal } from "../tiers/helpers.js";

const CONFIG = new TextEncoder().encode(JSON.stringify({ compact_after_messages: 6 }));

let endpoint: ChatEndpoint | undefined;
afterEach(async () => {
  await closeAll();
  await endpoint?.close();
});

async function notesHost(): Promise<Host> {
  endpoint = await new ChatEndpoint(notesModel).start();
  return openTestHost({
    model: endpoint.baseUrl,
    harnesses: [{ name: "notes", runtime: "local", target: "notes" }],
    // The operator lets reads run unattended; writes always park (the agent's policy).
    toolsWithoutApproval: ["notes.read"],
  });
}

function exec(host: Host, session: string, text: string) {
  return host.placer.exec({ session, inputs: [textMessage("user", text)], config: CONFIG, signal: signal() });
}

describe("notes agent end to end", () => {
  it("notesAgentToolCallApprovalWriteOnceCompactionReplay", async () => {
    const host = await notesHost();
    const ep = endpoint!;
    const { uid: s } = await host.createSession({ harness: "notes" });
    const live: string[] = [];

    // 1. A write parks at the approval gate; nothing is written yet.
    const parked = await exec(host, s, "remember blue as color");
    expect(parked.parked).toBeDefined();
    expect(appliedWrites(host.config.dataDir, s)).toEqual([]);
    await host.placer.approve(s, { ...parked.parked!, approved: true, reason: "ok" });
    const resumed = await host.placer.resume(s, signal());
    live.push(...(resumed.turn?.outputs ?? []));
    expect(resumed.turn?.outputs.at(-1)).toMatch(/^done: .*"duplicate":false/);
    // A second resume has nothing to do: still exactly one write.
    await host.placer.resume(s, signal());
    expect(appliedWrites(host.config.dataDir, s)).toHaveLength(1);
    expect(readFileSync(join(sandboxDir(host.config.dataDir, s), "notes", "color.txt"), "utf8")).toBe("blue");

    // 2. A read runs unattended (operator policy) and feeds the note back.
    const read = await exec(host, s, "what is color");
    live.push(...read.outputs);
    expect(read.outputs.at(-1)).toMatch(/^done: .*"text":"blue"/);

    // 3. Past the threshold the agent compacts; requests stay bounded however many turns follow.
    const beforeFork = (await records(host, s)).length;
    for (let i = 0; i < 12; i++) live.push(...(await exec(host, s, `chat ${i}`)).outputs);
    const recs = await records(host, s);
    const compactions = recs.flatMap((r) => (compactionOfEvent(r.event) ? [r] : []));
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    const summaries = ep.bodies.filter((b) => contentText(b.messages?.[0]?.content).startsWith("Summarise"));
    expect(summaries).toHaveLength(compactions.length);
    const turnRequests = ep.bodies.filter((b) => !summaries.includes(b));
    expect(Math.max(...turnRequests.slice(-8).map((b) => b.messages?.length ?? 0))).toBeLessThanOrEqual(10);
    expect(contentText(turnRequests.at(-1)?.messages?.[1]?.content)).toMatch(
      /^Summary of the conversation so far:\nsummary\(/,
    );
    expect(appliedWrites(host.config.dataDir, s)).toHaveLength(1);
    // GetSession shows the newest compaction (output only).
    const view = await sessionView(host.placer, await host.getSession(s));
    const shown = JSON.parse(view.annotations[COMPACTION_ANNOTATION] ?? "{}") as { seq?: number; through_seq?: number };
    const newest = compactionOfEvent(compactions.at(-1)!.event)!;
    expect(shown).toEqual({
      seq: compactions.at(-1)!.seq,
      from_seq: Number(newest.fromSeq),
      through_seq: Number(newest.throughSeq),
    });

    // 4. Replay: identical outputs, zero model calls; the full chain verifies.
    const calls = ep.requests;
    const replay = await host.placer.replay(s, signal());
    expect(ep.requests).toBe(calls);
    expect(replay.outputs.filter((t) => t !== "")).toEqual(live.filter((t) => t !== ""));
    expect((await host.journal.verify(s)).ok).toBe(true);

    // 5. Forks before and after a compaction each take a turn and replay.
    const lastCompaction = compactions.at(-1)!.seq;
    for (const atSeq of [beforeFork, lastCompaction + 3]) {
      const { children } = await host.placer.fork({
        parent: s,
        atSeq,
        children: childMetas(1, "notes"),
        signal: signal(),
      });
      const child = children[0]!.uid;
      const before = ep.bodies.length;
      const out = await exec(host, child, "after fork");
      expect(out.outputs.at(-1)).toBe("ok: after fork");
      // Before: the child inherits no compaction (its history starts at seq 1; past the threshold it
      // compacts on its own, from seq 1). After: it inherits the window and the summary.
      const childRecs = await records(host, child);
      expect(SessionLog.of(childRecs).historyBase(atSeq + 2) > 0).toBe(atSeq > beforeFork);
      const own = childRecs.filter((r) => r.seq > atSeq + 1).flatMap((r) => compactionOfEvent(r.event) ?? []);
      if (atSeq === beforeFork) expect(own.map((c) => Number(c.fromSeq))).toEqual([1]);
      else {
        const sent = ep.bodies.slice(before);
        expect(contentText(sent.at(-1)?.messages?.[1]?.content)).toMatch(/^Summary of the conversation so far:/);
      }
      const n = ep.requests;
      await host.placer.replay(child, signal());
      expect(ep.requests).toBe(n);
      expect((await host.journal.verify(child)).ok).toBe(true);
    }
    expect(appliedWrites(host.config.dataDir, s)).toHaveLength(1);
  });

  it("operatorPolicyOnlyTightens: an ungated tool the operator does not list is refused; a gated one parks even when listed", async () => {
    endpoint = await new ChatEndpoint(notesModel).start();
    // notes.read is sent CONTROLLER_MEDIATED (the agent's policy: never), but this operator lists nothing.
    const strict = await openTestHost({
      model: endpoint.baseUrl,
      harnesses: [{ name: "notes", runtime: "local", target: "notes" }],
    });
    const { uid: a } = await strict.createSession({ harness: "notes" });
    const refused = await rejectsWithCode(exec(strict, a, "what is color"), ErrorCode.PermissionDenied);
    expect(refused.message).toMatch(/notes\.read.*needs an operator's approval on this host/);
    // notes.write is gated by the agent (approval: always) even where the operator would run it unattended.
    const lax = await openTestHost({
      model: endpoint.baseUrl,
      harnesses: [{ name: "notes", runtime: "local", target: "notes" }],
      toolsWithoutApproval: ["notes.read", "notes.write"],
    });
    const { uid: b } = await lax.createSession({ harness: "notes" });
    const parked = await exec(lax, b, "remember red as flag");
    expect(parked.parked?.toolCallId).toBe("1.0:call_w");
    expect(appliedWrites(lax.config.dataDir, b)).toEqual([]);
  });

  it("localToolApprovalAsksTheOperatorAndRunsOnlyWhenAllowed", async () => {
    const model = new ScriptedModel([], (req) => {
      const last = req.messages.at(-1);
      if (last?.role === "tool") {
        const part = last.parts[0]?.part;
        return say(
          part?.case === "toolResult"
            ? part.value.isError
              ? `err:${part.value.error}`
              : `got:${messageText({ role: "x", parts: part.value.content } as never)}`
            : "?",
        );
      }
      return calls(["stamp", { text: messageText(last) }]);
    });
    const host = await openTestHost(
      {
        harnesses: [
          {
            name: "stamper",
            runtime: "local",
            target: new URL("./fixtures/local-approval.ts", import.meta.url).pathname,
          },
        ],
      },
      { model },
    );
    const { uid } = await host.createSession({ harness: "stamper" });
    const first = await host.placer.exec({ session: uid, inputs: [textMessage("user", "ok")], signal: signal() });
    expect(first.parked?.toolCallId).toBe("ask-0");
    await host.placer.approve(uid, { ...first.parked!, approved: true, reason: "allow" });
    expect((await host.placer.resume(uid, signal())).turn?.outputs.at(-1)).toBe("got:OK");
    const second = await host.placer.exec({ session: uid, inputs: [textMessage("user", "no")], signal: signal() });
    await host.placer.approve(uid, { ...second.parked!, approved: true, reason: "deny" });
    expect((await host.placer.resume(uid, signal())).turn?.outputs.at(-1)).toBe("err:the operator denied stamp");
    const n = model.calls;
    const replay = await host.placer.replay(uid, signal());
    expect(model.calls).toBe(n);
    expect(replay.outputs.filter((t) => t !== "")).toEqual(["got:OK", "err:the operator denied stamp"]);
  });
});
