// The executor of authors' own tools (src/controller/host-tools.ts): arguments checked before `run`,
// `run` at most once per (session, idempotency key) — also across a host restart, from the receipts
// file — and a torn last receipt line (a host that died while appending it) neither breaks later calls
// nor swallows the next receipt.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { HostToolExecutor, hostTool } from "../../src/controller/host-tools.js";
import { Mediation, ToolCallSchema } from "../../src/gen/agentsessions/v1/common_pb.js";

const dir = mkdtempSync(join(tmpdir(), "hh-host-tools-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function counted(file: string): { exec: HostToolExecutor; runs: string[] } {
  const runs: string[] = [];
  const tools = {
    "desk.book": hostTool({
      args: z.object({ room: z.string().min(1) }),
      run: ({ room }, ctx) => {
        runs.push(`${ctx.session}/${ctx.idempotencyKey}`);
        return { booked: room };
      },
    }),
  };
  return { exec: new HostToolExecutor(tools, file), runs };
}

function call(key: string, args: JsonObject) {
  return create(ToolCallSchema, {
    id: "b1",
    tool: "desk.book",
    mediation: Mediation.REQUIRES_APPROVAL,
    idempotencyKey: key,
    args,
  });
}

const ctx = (sessionUid: string) => ({ sessionUid, signal: new AbortController().signal });

describe("host tools executor", () => {
  it("aToolRunsAtMostOncePerSessionAndIdempotencyKeyAlsoAfterARestart", async () => {
    const file = join(dir, "once.jsonl");
    const first = counted(file);
    expect(await first.exec.execute(call("k1", { room: "4" }), ctx("s1"))).toEqual({ output: { booked: "4" } });
    expect(await first.exec.execute(call("k1", { room: "4" }), ctx("s1"))).toEqual({ output: { booked: "4" } });
    await first.exec.execute(call("k1", { room: "4" }), ctx("s2"));
    expect(first.runs).toEqual(["s1/k1", "s2/k1"]);
    const restarted = counted(file);
    expect(await restarted.exec.execute(call("k1", { room: "4" }), ctx("s1"))).toEqual({ output: { booked: "4" } });
    expect(restarted.runs).toEqual([]);
  });

  it("argumentsThatFailTheSchemaNeverReachRun", async () => {
    const { exec, runs } = counted(join(dir, "bad-args.jsonl"));
    await expect(exec.execute(call("k1", { room: "" }), ctx("s1"))).rejects.toThrow(/desk\.book: invalid arguments/);
    await expect(exec.execute(call("k2", { floor: 3 }), ctx("s1"))).rejects.toThrow(/invalid arguments/);
    expect(runs).toEqual([]);
  });

  it("aTornLastReceiptLineIsNoReceiptAndDoesNotSwallowTheNext", async () => {
    const file = join(dir, "torn.jsonl");
    await counted(file).exec.execute(call("k1", { room: "1" }), ctx("s1"));
    appendFileSync(file, '{"session":"s1","key":"k2","tool":"desk.bo');
    const after = counted(file);
    await after.exec.execute(call("k2", { room: "2" }), ctx("s1"));
    await after.exec.execute(call("k1", { room: "1" }), ctx("s1"));
    expect(after.runs).toEqual(["s1/k2"]);
    const again = counted(file);
    await again.exec.execute(call("k2", { room: "2" }), ctx("s1"));
    expect(again.runs).toEqual([]);
    expect(
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.startsWith('{"session":"s1","key":"k2","tool":"desk.book"')),
    ).toHaveLength(1);
  });
});
