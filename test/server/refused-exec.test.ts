// A refused Exec leaves no session: an Exec that creates its session and is
// then refused (a memory-tier harness on a runtime that cannot snapshot) or fails before its first
// record removes the session again; a session with records is never removed.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inputEvent } from "../journal/events.js";
import { drain, startFixture, userInput, type Fixture } from "./helpers.js";
import { created } from "../journal/sessions.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture({
    config: { harnesses: [{ name: "localcounter", runtime: "local", target: "counter" }] },
  });
});
afterAll(async () => {
  await f?.close();
});

describe("refused Exec", () => {
  it("aRefusedExecLeavesNoSession", async () => {
    const before = await f.host.journal.allSessionUids();
    const { items, error } = await drain(f.sessions.exec({ harness: "localcounter", inputs: [userInput("a")] }));
    expect(error?.grpcCode).toBe(status.FAILED_PRECONDITION);
    const first = items[0]?.update;
    const uid = first?.case === "session" ? (first.value.metadata?.uid ?? "") : "";
    expect(uid).not.toBe("");
    expect(await f.host.journal.getSession(uid)).toBeUndefined();
    expect(await f.host.journal.allSessionUids()).toEqual(before);
  });

  it("an Exec refused on an existing session keeps that session", async () => {
    const s = await f.sessions.createSession({ session: { harness: "localcounter" } });
    const uid = s.metadata?.uid ?? "";
    const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("a")] }));
    expect(error?.grpcCode).toBe(status.FAILED_PRECONDITION);
    expect(await f.host.journal.getSession(uid)).toBeDefined();
  });

  it("removeEmptySession never removes a session with records", async () => {
    const j = await created(f.host.journal, "s-with-records");
    await j.append("s-with-records", 0, 0, inputEvent("x"));
    expect(await j.removeEmptySession("s-with-records")).toBe(false);
    expect((await j.head("s-with-records")).seq).toBe(1);
    expect(await j.removeEmptySession("s-missing")).toBe(false);
  });
});
