// The worked examples of docs/protocol.md §5.2 (a two-record hash chain) and §5.3 (a model-input hash)
// are recomputed from the text of the document with src/canon, so the spec's canonical forms and the
// code's stay one and the same.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { canonicalRecord, hashRecordJson, jcs, modelInputHash } from "../../src/canon/index.js";
import { EventSchema, ModelCallSchema } from "../../src/gen/agentsessions/v1/common_pb.js";

const protocol = readFileSync(join(resolve(import.meta.dirname, "../.."), "docs/protocol.md"), "utf8");

describe("docs/protocol.md worked examples", () => {
  it("§5.2: each record's canonical text is canonical and hashes to the content_hash shown", () => {
    const rows = [...protocol.matchAll(/^seq (\d+) {2}(\{.*\})\n {7}content_hash ([0-9a-f]{64})$/gm)];
    expect(rows).toHaveLength(2);
    let prev = "";
    for (const [, seq, text, hash] of rows) {
      const doc = JSON.parse(text!) as { event: JsonValue; prev_hash: string; seq: string };
      expect(jcs(doc), "the example is in JCS form").toBe(text);
      expect(doc.prev_hash).toBe(prev);
      expect(doc.seq).toBe(seq);
      expect(hashRecordJson(prev, BigInt(seq!), doc.event)).toBe(hash);
      // The event round-trips through protobuf to the same canonical text the journal hashes.
      expect(canonicalRecord(prev, BigInt(seq!), fromJson(EventSchema, doc.event))).toBe(text);
      prev = hash!;
    }
  });

  it("§5.3: the model-input example hashes as modelInputHash computes it", () => {
    const m = /has the canonical form\n\n```\n(\{.*\})\n```\n\nand the input hash `([0-9a-f]{64})`/.exec(protocol);
    expect(m, "protocol.md §5.3 shows a canonical ModelCall and its hash").not.toBeNull();
    const [, text, hash] = m!;
    const request = fromJson(ModelCallSchema, JSON.parse(text!) as JsonValue);
    expect(jcs(JSON.parse(text!))).toBe(text);
    expect(modelInputHash(request)).toBe(hash);
  });
});
