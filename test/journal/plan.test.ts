// The one write plan (src/journal/plan.ts) every backend stores: CAS before fence, the fence minted or
// given, the chain, and the compute-state and pin projections the session row keeps — checked here on
// the pure function; the conformance suite checks that each backend stores what it answers.
import { describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { EMPTY_TIP, planAppend, planForkMarker, planImport } from "../../src/journal/plan.js";
import { executionStartEvent, inputEvent, lifecycleEvent, unhashableEvent } from "./events.js";

describe("planAppend", () => {
  it("checksCasBeforeTheFence", () => {
    const tip = { ...EMPTY_TIP, seq: 0, fence: 5 };
    // Both are wrong: the CAS is reported.
    expect(() => planAppend("s", tip, 3, 1, [inputEvent("a")])).toThrow(expect.objectContaining({ code: "conflict" }));
    expect(() => planAppend("s", tip, 0, 1, [inputEvent("a")])).toThrow(expect.objectContaining({ code: "fenced" }));
  });

  it("chainsOntoTheTipUnderTheGivenFenceAndKeepsTheSessionsFence", () => {
    const plan = planAppend("s", EMPTY_TIP, 0, 2, [inputEvent("a"), inputEvent("b")]);
    expect(plan.records).toEqual(chainEvents({ seq: 0, hash: "" }, 2, [inputEvent("a"), inputEvent("b")]));
    expect(plan.fence).toBe(2);
    expect(plan.after).toMatchObject({ seq: 2, hash: plan.records[1]?.contentHash, fence: 0, computeState: "LIVE" });
  });

  it("aMintedFenceIsTheSessionsNextAndNeverStale", () => {
    const tip = { ...EMPTY_TIP, fence: 7 };
    const plan = planAppend("s", tip, 0, "mint", [inputEvent("a")]);
    expect(plan.fence).toBe(8);
    expect(plan.after.fence).toBe(8);
    expect(plan.records[0]?.fence).toBe(8);
  });

  it("movesThePinOnlyOnAnExecutionStartAndSaysSo", () => {
    const started = planAppend("s", EMPTY_TIP, 0, 1, [executionStartEvent("echo", "1.0.0")]);
    expect(started.pinChanged).toBe(true);
    expect(started.after.pin).toMatchObject({ harness: "echo", version: "1.0.0", seq: 1 });
    const next = planAppend("s", started.after, 1, 1, [inputEvent("a")]);
    expect(next.pinChanged).toBe(false);
    expect(next.after.pin).toEqual(started.after.pin);
  });

  it("anUncanonicalisableEventPlansNothing", () => {
    expect(() => planAppend("s", EMPTY_TIP, 0, 1, [inputEvent("a"), unhashableEvent()])).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });
});

describe("planForkMarker and planImport", () => {
  it("aForkMarkerFollowsTheForkPointUnderTheChildsFirstFenceAndLeavesItCold", () => {
    const pin = { harness: "echo", version: "1.0.0", digest: "", seq: 1 };
    const plan = planForkMarker("child", 4, "h4", pin);
    expect(plan.records).toHaveLength(1);
    expect(plan.records[0]).toMatchObject({ seq: 5, prevHash: "h4", fence: 1 });
    expect(plan.after).toMatchObject({ seq: 5, fence: 1, computeState: "COLD", pin });
    expect(plan.pinChanged).toBe(false);
  });

  it("anImportKeepsTheRecordsAsGivenAndProjectsThem", () => {
    const records = chainEvents({ seq: 0, hash: "" }, 3, [
      executionStartEvent("echo", "2.0.0"),
      lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND),
    ]);
    const plan = planImport({ ...EMPTY_TIP, fence: 3 }, records);
    expect(plan.records).toEqual(records);
    expect(plan.after).toMatchObject({ seq: 2, fence: 3, computeState: "COLD", pin: { version: "2.0.0", seq: 1 } });
    expect(plan.pinChanged).toBe(true);
  });
});
