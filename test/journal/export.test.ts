// JSONL export and database-free verification: an export verifies intact, and any edit to a line is
// caught and named by seq.
import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { exportJsonl, verifyJsonl, verifyRecords, type LineRecord } from "../../src/journal/transfer/export.js";
import { writeMultiTurn } from "./session-fixture.js";

async function exported(): Promise<{ lines: string[]; count: number }> {
  const journal = new MemoryJournal();
  const count = await writeMultiTurn(journal, "s-export");
  const lines: string[] = [];
  for await (const line of exportJsonl(journal, "s-export")) lines.push(line);
  return { lines, count };
}

describe("journal export", () => {
  it("writes one proto3-JSON LogRecord per line with snake_case names", async () => {
    const { lines, count } = await exported();
    expect(lines).toHaveLength(count);
    expect(lines[0]).toMatch(/^\{"seq":"1","prev_hash":"","content_hash":"[0-9a-f]{64}","fence":"0","event":\{/);
    const second = JSON.parse(lines[1] ?? "{}") as Record<string, unknown>;
    expect(second["seq"]).toBe("2");
    expect(second["event"]).toMatchObject({ execution_id: "0123456789abcdef", kind: "EVENT_INPUT" });
    const first = JSON.parse(lines[0] ?? "{}") as { event: { execution_start: Record<string, unknown> } };
    expect(first.event.execution_start).toMatchObject({
      config: "AP8gCgk=",
      resume_from_seq: "9007199254740993",
      input_count: "1",
    });
  });

  it("verifies an intact export", async () => {
    const { lines, count } = await exported();
    const result = await verifyJsonl(lines);
    expect(result).toMatchObject({ ok: true, records: count });
    expect(
      await verifyJsonl(
        lines
          .map((l) => `${l}\n`)
          .join("")
          .split("\n"),
      ),
    ).toMatchObject({ ok: true, records: count });
  });

  it("names the seq of a line whose event was edited by one character", async () => {
    const { lines } = await exported();
    const tampered = [...lines];
    tampered[3] = (tampered[3] ?? "").replace("São", "Sao");
    expect(tampered[3]).not.toBe(lines[3]);
    const result = await verifyJsonl(tampered);
    expect(result).toMatchObject({ ok: false, kind: "tampered", seq: 4 });
    expect(result.ok ? "" : result.message).toContain("seq 4");
  });

  it("classes a dropped line as a gap and a broken line as undecodable", async () => {
    const { lines } = await exported();
    expect(await verifyJsonl([lines[0] ?? "", lines[2] ?? ""])).toMatchObject({ ok: false, kind: "gap", seq: 2 });
    const broken = [lines[0] ?? "", "{not json", lines[2] ?? ""];
    const result = await verifyJsonl(broken);
    expect(result).toMatchObject({ ok: false, kind: "undecodable", seq: 2, line: 2 });
    expect(result.ok ? "" : result.message).toContain("seq 2");
    const noEvent = [lines[0] ?? "", JSON.stringify({ seq: "2", prev_hash: "", content_hash: "" })];
    expect(await verifyJsonl(noEvent)).toMatchObject({ ok: false, kind: "undecodable", seq: 2 });
  });

  it("detects a relinked prev_hash", async () => {
    const { lines } = await exported();
    const rec = JSON.parse(lines[2] ?? "{}") as Record<string, unknown>;
    rec["prev_hash"] = "f".repeat(64);
    const relinked = [lines[0] ?? "", lines[1] ?? "", JSON.stringify(rec)];
    expect(await verifyJsonl(relinked)).toMatchObject({ ok: false, kind: "tampered", seq: 3 });
  });
});

describe("verifyRecords (verify --server)", () => {
  it("verifyRecordsStreamsAndStopsReadingAtTheFirstBadRecord", async () => {
    const journal = new MemoryJournal();
    const count = await writeMultiTurn(journal, "s-stream");
    expect(await verifyRecords(journal.read("s-stream"))).toMatchObject({ ok: true, records: count });
    const records = await journal.readRange("s-stream");
    async function* tamperedThenBroken(): AsyncIterable<LineRecord> {
      yield records[0] as LineRecord;
      yield { ...(records[1] as LineRecord), contentHash: "0".repeat(64) };
      throw new Error("read past the first bad record");
    }
    expect(await verifyRecords(tamperedThenBroken())).toMatchObject({ ok: false, kind: "tampered", seq: 2 });
  });
});
