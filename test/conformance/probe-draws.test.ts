// memory.fork-randomness compares a probe answer of several draws draw by draw (docs/conformance.md).
import { describe, expect, it } from "vitest";
import { repeatedDraws } from "../../src/conformance/checks/memory.js";

describe("randomness probe draws", () => {
  it("aProbeAnswerOfSeveralDrawsFailsOnEachDrawThatRepeatsEvenWhenOthersDiffer", () => {
    expect(repeatedDraws("random:fresh=a uuid=x math=0.5", "random:fresh=b uuid=x math=0.5")).toEqual([
      "uuid=x",
      "math=0.5",
    ]);
    expect(repeatedDraws("random:fresh=a uuid=x", "random:fresh=b uuid=y")).toEqual([]);
  });

  it("aSingleDrawRepeatsOnlyWhenTheWholeValueIsTheSame", () => {
    expect(repeatedDraws("random:3f2a", "random:3f2a")).toEqual(["3f2a"]);
    expect(repeatedDraws("random:3f2a", "random:3f2b")).toEqual([]);
  });
});
