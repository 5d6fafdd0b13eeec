// The one fork every runtime uses (src/runtime/fork.ts): a memory ref is restored under the child's
// uid, any other ref gives the child a fresh actor, and a fork without a child uid is refused.
import { describe, expect, it } from "vitest";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { forkActor } from "../../src/runtime/fork.js";
import type { Incarnation, SessionSpec, SnapshotRef } from "../../src/runtime/types.js";
import { journalRef, memoryRef } from "../../src/snapshot/ref.js";

function recordingRuntime() {
  const calls: string[] = [];
  const inc = (spec: SessionSpec, origin: Incarnation["origin"]): Incarnation =>
    ({ sessionUid: spec.sessionUid, runtime: "fake", worker: "", address: "", origin }) as Incarnation;
  return {
    calls,
    runtime: {
      name: "fake",
      async create(spec: SessionSpec) {
        calls.push(`create ${spec.sessionUid} ${spec.harnessName}`);
        return inc(spec, "created");
      },
      async restore(ref: SnapshotRef, spec: SessionSpec) {
        calls.push(`restore ${ref.externalUri} ${spec.sessionUid} ${spec.harnessName}`);
        return inc(spec, "restored");
      },
    },
  };
}

describe("forkActor", () => {
  it("aMemoryForkRestoresTheParentsCheckpointUnderTheChildUid", async () => {
    const { calls, runtime } = recordingRuntime();
    const child = await forkActor(runtime, memoryRef("parent", "sha256:ab"), {
      childSessionUid: "c1",
      harnessName: "h",
    });
    expect(child.origin).toBe("restored");
    expect(calls).toEqual(["restore sha256:ab c1 h"]);
  });

  it("aForkWithoutMemoryStartsTheChildOnAFreshActor", async () => {
    const { calls, runtime } = recordingRuntime();
    const child = await forkActor(runtime, journalRef("parent"), { childSessionUid: "c2", harnessName: "h" });
    expect(child.origin).toBe("created");
    expect(calls).toEqual(["create c2 h"]);
  });

  it("aForkWithoutAChildUidIsRefusedAndCreatesNothing", async () => {
    const { calls, runtime } = recordingRuntime();
    const err = await forkActor(runtime, journalRef("parent"), { childSessionUid: "", harnessName: "h" }).catch(
      (e: unknown) => e,
    );
    expect(isHostError(err, ErrorCode.InvalidArgument)).toBe(true);
    expect(calls).toEqual([]);
  });
});
