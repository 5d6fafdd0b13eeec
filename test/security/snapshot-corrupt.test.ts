// Corrupt snapshots over the wire (docs/protocol.md §9.4): a truncated or altered blob makes Resume and Exec of
// the suspended session fail DATA_LOSS naming the blob's digest; the session stays suspended with its
// journal unchanged; other sessions are unaffected; once the good bytes are back it resumes.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ComputeState } from "../../src/gen/agentsessions/v1/session_pb.js";
import { RpcError } from "../../src/wire/index.js";
import { drain, startFixture, userInput, type Fixture } from "../server/helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

async function turns(uid: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const { items, error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("go")] }));
    if (error) throw error;
    for (const it of items) {
      const ev = it.update.case === "record" ? it.update.value.event : undefined;
      if (ev?.body.case === "message" && ev.kind === EventKind.EVENT_OUTPUT)
        out.push(ev.body.value.parts.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join(""));
    }
  }
  return out;
}

async function refused(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RpcError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** The blob file and digest of the session's newest SUSPEND. */
async function blobOf(uid: string): Promise<{ path: string; digest: string }> {
  const last = (await f.host.journal.readRange(uid)).at(-1)!;
  const lc = last.event.body.case === "lifecycle" ? last.event.body.value : undefined;
  const digest = lc?.snapshotExternalUri ?? "";
  const hex = digest.replace(/^sha256:/, "");
  expect(hex).toMatch(/^[0-9a-f]{64}$/);
  return { path: join(f.dir, "snapshots", "sha256", hex.slice(0, 2), hex), digest };
}

describe("corrupt snapshot blobs", () => {
  it("truncated or altered: DATA_LOSS with the digest, still suspended, others unaffected; good bytes resume", async () => {
    const a = (await f.sessions.createSession({ session: { harness: "counter" } })).metadata!.uid;
    const b = (await f.sessions.createSession({ session: { harness: "counter" } })).metadata!.uid;
    expect(await turns(a, 2)).toEqual(["1", "2"]);
    expect(await turns(b, 3)).toEqual(["1", "2", "3"]);
    await f.sessions.suspend({ session: a });
    await f.sessions.suspend({ session: b });
    const { path, digest } = await blobOf(a);
    expect((await blobOf(b)).digest).not.toBe(digest);
    const good = readFileSync(path);
    const head = (await f.host.journal.head(a)).seq;

    const damaged: [string, Buffer][] = [
      ["truncated", good.subarray(0, Math.floor(good.length / 2))],
      ["altered", Buffer.from(good.map((byte, i) => (i === good.length - 1 ? byte ^ 0x01 : byte)))],
    ];
    for (const [what, bytes] of damaged) {
      writeFileSync(path, bytes);
      const resume = await refused(f.sessions.resume({ session: a }));
      expect(resume.grpcCode, what).toBe(GrpcStatus.DATA_LOSS);
      expect(resume.details, what).toContain(digest.replace(/^sha256:/, ""));
      const exec = await drain(f.sessions.exec({ session: a, inputs: [userInput("go")] }));
      expect(exec.error?.grpcCode, what).toBe(GrpcStatus.DATA_LOSS);
      expect((await f.host.journal.head(a)).seq, what).toBe(head);
      expect((await f.sessions.getSession({ uid: a })).computeState, what).toBe(ComputeState.COMPUTE_COLD);
    }

    // Nothing else is affected.
    await f.sessions.resume({ session: b });
    expect(await turns(b, 1)).toEqual(["4"]);

    writeFileSync(path, good);
    await f.sessions.resume({ session: a });
    expect(await turns(a, 1)).toEqual(["3"]);
    for (const s of [a, b]) expect(await f.host.journal.verify(s)).toMatchObject({ ok: true });
  }, 120_000);
});
