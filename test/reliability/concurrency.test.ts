// Concurrency on one session (docs/protocol.md §5.5): overlapping operations are refused ABORTED, never queued
// or interleaved. 50 concurrent Execs → exactly one proceeds; random mixes of Exec, Fork, Suspend and
// Resume → every answer is OK or ABORTED, each turn's records stay contiguous, every chain verifies.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { JournalRecord } from "../../src/journal/types.js";
import type { ModelProvider } from "../../src/model/types.js";
import { RpcError } from "../../src/wire/index.js";
import { drain, gatedEchoModel, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { Prng } from "./prng.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return GrpcStatus.OK;
  } catch (err) {
    if (err instanceof RpcError) return err.grpcCode;
    throw err;
  }
}

/** Every execution's records form one contiguous run (nothing of another operation inside it). */
function expectNoInterleaving(records: readonly JournalRecord[]): void {
  let open = "";
  for (const rec of records) {
    const ev = rec.event;
    if (ev.kind === EventKind.EVENT_EXECUTION_START) {
      expect(open, `seq ${rec.seq} starts a turn inside turn ${open}`).toBe("");
      open = ev.executionId;
    } else if (open !== "") {
      expect(ev.executionId, `seq ${rec.seq} interleaves into turn ${open}`).toBe(open);
      if (ev.kind === EventKind.EVENT_END || ev.kind === EventKind.EVENT_ERROR) open = "";
    }
  }
}

describe("concurrent operations on one session", () => {
  it("50 concurrent Execs: exactly one proceeds, 49 are ABORTED, the chain verifies", async () => {
    const gate = gatedEchoModel();
    const f = (fx = await startFixture({ overrides: { model: gate.model } }));
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata!.uid;
    const first = drain(f.sessions.exec({ session: uid, inputs: [userInput("winner")] }));
    await gate.entered;
    const rest = await Promise.all(
      Array.from({ length: 49 }, (_, i) => drain(f.sessions.exec({ session: uid, inputs: [userInput(`loser ${i}`)] }))),
    );
    gate.release();
    const won = await first;
    expect(won.error).toBeUndefined();
    expect(rest.map((r) => r.error?.grpcCode)).toEqual(Array(49).fill(GrpcStatus.ABORTED));
    const records = await f.host.journal.readRange(uid);
    expect(records.filter((r) => r.event.kind === EventKind.EVENT_EXECUTION_START)).toHaveLength(1);
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true, records: records.length });
  });

  it("random mixes of Exec, Fork, Suspend and Resume never interleave records", async () => {
    // A model that holds each call until the round's gate opens, so a turn can be kept in flight.
    let gate: Promise<void> = Promise.resolve();
    let entered: () => void = () => undefined;
    const model: ModelProvider = {
      name: "round-gated-echo",
      async invoke(request) {
        entered();
        await gate;
        const last = request.messages.at(-1);
        const text = (last?.parts ?? []).map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
        return { message: textMessage("assistant", `echo:${text}`) };
      },
    };
    const f = (fx = await startFixture({ overrides: { model } }));
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata!.uid;
    const rng = new Prng(31337);
    const codes = new Map<number, number>();
    const op = (label: string): Promise<number> => {
      switch (rng.int(0, 3)) {
        case 0:
          return drain(f.sessions.exec({ session: uid, inputs: [userInput(label)] })).then(
            (r) => r.error?.grpcCode ?? GrpcStatus.OK,
          );
        case 1:
          return codeOf(f.sessions.fork({ session: uid, count: 1 }));
        case 2:
          return codeOf(f.sessions.suspend({ session: uid }));
        default:
          return codeOf(f.sessions.resume({ session: uid }));
      }
    };
    for (let round = 0; round < 8; round++) {
      // Held round: a turn is in flight; every other operation on the session must be refused.
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      const inFlight = new Promise<void>((r) => (entered = r));
      const holder = drain(f.sessions.exec({ session: uid, inputs: [userInput(`hold ${round}`)] }));
      await inFlight;
      const refused = await Promise.all(Array.from({ length: 5 }, (_, i) => op(`h${round}.${i}`)));
      expect(refused).toEqual(Array(5).fill(GrpcStatus.ABORTED));
      open();
      expect((await holder).error).toBeUndefined();
      // Free round: racing operations, each OK or ABORTED.
      gate = Promise.resolve();
      entered = () => undefined;
      for (const code of await Promise.all(Array.from({ length: 5 }, (_, i) => op(`f${round}.${i}`))))
        codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect(
      [...codes.keys()].every((c) => c === GrpcStatus.OK || c === GrpcStatus.ABORTED),
      JSON.stringify([...codes]),
    ).toBe(true);
    expect(codes.get(GrpcStatus.OK) ?? 0).toBeGreaterThan(0);
    for (const s of await f.host.journal.allSessionUids()) {
      expect(await f.host.journal.verify(s)).toMatchObject({ ok: true });
      expectNoInterleaving(await f.host.journal.readRange(s));
    }
  });
});
