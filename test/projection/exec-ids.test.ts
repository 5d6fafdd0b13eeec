// The flat execution-id table of a projection (src/projection/exec-ids.ts): an id's index is the one
// it was added at, an id never added has none, ids are unique, and the stored form rebuilds a table
// that answers the same — damaged columns are refused, never half read.
import { describe, expect, it } from "vitest";
import { ExecIds } from "../../src/projection/exec-ids.js";

const IDS = ["0123456789abcdef", "fedcba9876543210", "", "ünïcode-id", "x".repeat(300), "a", "ab", "ba"];

function filled(n: number): { table: ExecIds; ids: string[] } {
  const table = new ExecIds();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = IDS[i] ?? `${i.toString(16).padStart(16, "0")}`;
    ids.push(id);
    expect(table.add(id)).toBe(i);
  }
  return { table, ids };
}

describe("execution ids, flat", () => {
  it("everyIdIsFoundAtTheIndexItWasAddedAtAndNoOtherIdIsFound", () => {
    const { table, ids } = filled(5_000);
    for (const [i, id] of ids.entries()) expect(table.indexOf(id)).toBe(i);
    for (const other of ["0123456789abcdeg", "ünïcode-iD", "x".repeat(299), "b", "00000000000013880"])
      expect(table.indexOf(other)).toBeUndefined();
  });

  it("anIdAddedTwiceIsRefused", () => {
    const { table } = filled(20);
    expect(() => table.add("ünïcode-id")).toThrow(RangeError);
    expect(() => table.add("0000000000000010")).toThrow(RangeError);
    expect(table.length).toBe(20);
  });

  it("theStoredFormRebuildsATableThatAnswersTheSameAndGrowsOn", () => {
    const { table, ids } = filled(3_000);
    const s = table.exportState();
    const back = ExecIds.fromState({ bytes: s.bytes.slice(), ends: s.ends.slice() });
    expect(back.length).toBe(ids.length);
    for (const [i, id] of ids.entries()) expect(back.indexOf(id)).toBe(i);
    expect(back.indexOf("never")).toBeUndefined();
    expect(back.add("never")).toBe(ids.length);
    expect(back.indexOf("never")).toBe(ids.length);
    expect(back.indexOf(ids[7]!)).toBe(7);
  });

  it("damagedStoredColumnsAreRefused", () => {
    const s = filled(IDS.length).table.exportState();
    const ends = new Uint32Array(s.ends.slice().buffer);
    const withEnds = (edit: (e: Uint32Array) => void) => {
      const e = ends.slice();
      edit(e);
      return { bytes: s.bytes, ends: new Uint8Array(e.buffer) };
    };
    const damaged = [
      { bytes: s.bytes, ends: s.ends.subarray(0, s.ends.length - 1) },
      { bytes: s.bytes.subarray(0, s.bytes.length - 1), ends: s.ends },
      { bytes: new Uint8Array([...s.bytes, 0x41]), ends: s.ends },
      withEnds((e) => {
        e[3] = e[2]! - 1;
      }),
      // Two ids with the same bytes: "ab" stored where "ba" was.
      {
        bytes: Uint8Array.from(s.bytes, (b, i) =>
          i === s.bytes.length - 2 ? 0x61 : i === s.bytes.length - 1 ? 0x62 : b,
        ),
        ends: s.ends,
      },
    ];
    for (const d of damaged) expect(() => ExecIds.fromState(d)).toThrow(RangeError);
  });
});
