// The direct canonical writer (src/canon/proto-jcs.ts, a speed change) must write exactly what the
// proto3-JSON tree + JCS path writes, for journal events of every kind and every generated message, and
// decline (so the original path decides, errors included) on anything it cannot write the same way.
import { create, toJson, type DescMessage } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalProto,
  canonicalRecord,
  canonicalRecordViaTree,
  hashRecord,
  jcs,
  NotCanonicalizableError,
  protoJcs,
  recordJcs,
  sha256Hex,
} from "../../src/canon/index.js";
import * as common from "../../src/gen/agentsessions/v1/common_pb.js";
import * as harness from "../../src/gen/agentsessions/v1/harness_pb.js";
import * as registry from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import * as session from "../../src/gen/agentsessions/v1/session_pb.js";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { arbitraryInit } from "../security/arbitrary-message.js";

type Outcome = { ok: true; text: string } | { ok: false; error: string };

function outcome(f: () => string): Outcome {
  try {
    return { ok: true, text: f() };
  } catch (err) {
    return { ok: false, error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

const BODY_CASES = EventSchema.oneofs.find((o) => o.localName === "body")?.fields.map((f) => f.localName) ?? [];

/** Random events: every body case, with every field absent or hostile (lone surrogates, int64 extremes,
 * unknown enum numbers, bytes, Struct trees, huge strings), each nested message two levels deep. */
const eventArb: fc.Arbitrary<Event> = arbitraryInit(EventSchema, { depth: 3, known: ["", "exec-1"] }).map((init) =>
  create(EventSchema, init),
);
const prevArb = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "grapheme", maxLength: 4 }).map((s) => sha256Hex(s)),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const seqArb = fc.oneof(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.bigInt({ min: 0n, max: 2n ** 64n }));

const schemas: DescMessage[] = [common, harness, registry, session]
  .flatMap((m) => Object.values(m))
  .filter((v): v is DescMessage => typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "message");

describe("direct canonical writer", () => {
  it("writes every event's record exactly as the tree path does, hash included", () => {
    let direct = 0;
    let runs = 0;
    fc.assert(
      fc.property(eventArb, prevArb, seqArb, (event, prev, seq) => {
        runs++;
        const tree = outcome(() => canonicalRecordViaTree(prev, seq, event));
        const fast = recordJcs(EventSchema, event, prev, seq);
        if (fast !== undefined) {
          direct++;
          expect(tree).toEqual({ ok: true, text: fast });
        }
        expect(outcome(() => canonicalRecord(prev, seq, event))).toEqual(tree);
        if (tree.ok) expect(hashRecord(prev, seq, event)).toBe(sha256Hex(tree.text));
        else expect(() => hashRecord(prev, seq, event)).toThrow();
      }),
      { numRuns: 1500 },
    );
    // Not vacuous: the writer itself decided most records (it declines only lone surrogates and the like).
    expect(direct).toBeGreaterThan(runs / 2);
  });

  it("covers every body case of Event", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(eventArb, (event) => {
        if (event.body.case !== undefined && recordJcs(EventSchema, event, "", 1) !== undefined) {
          seen.add(event.body.case);
        }
      }),
      { numRuns: 1500 },
    );
    expect([...seen].sort()).toEqual([...BODY_CASES].sort());
  });

  it("writes every generated message as jcs(toJson) does", () => {
    expect(schemas.length).toBeGreaterThan(40);
    for (const schema of schemas) {
      fc.assert(
        fc.property(arbitraryInit(schema, { depth: 2 }), (init) => {
          const message = create(schema, init);
          const tree = outcome(() => jcs(toJson(schema, message, { useProtoFieldName: true })));
          const fast = protoJcs(schema, message);
          if (fast !== undefined) expect(tree).toEqual({ ok: true, text: fast });
          expect(outcome(() => canonicalProto(schema, message))).toEqual(tree);
        }),
        { numRuns: 60 },
      );
    }
  });

  it("edge values: empty and unicode strings, int64 extremes, bytes, enums, timestamps, Struct trees", () => {
    const events: Event[] = [
      create(EventSchema, {}),
      create(EventSchema, {
        executionId: 'é\u{1F600}\u0000\u001f"\\</script>\u2028',
        kind: 9999 as EventKind,
        schemaVersion: -1,
        ts: { seconds: 0n, nanos: 1 },
        body: {
          case: "tool",
          value: {
            id: "",
            tool: "t",
            args: { b: [1, -0, 1e21, 0.1, 5e-324, null, true, "x"], a: { "\u{1F600}": {}, "\uFFFF": [], "": "" } },
          },
        },
      }),
      create(EventSchema, { ts: { seconds: -62135596800n, nanos: 999_999_999 }, kind: EventKind.EVENT_END }),
      create(EventSchema, { ts: { seconds: 253402300799n, nanos: 120_000 } }),
      create(EventSchema, { ts: timestampFromDate(new Date("2026-12-05T03:30:00.123Z")) }),
      create(EventSchema, { ts: timestampFromDate(new Date("2026-12-05T03:30:00.123Z")) }),
      create(EventSchema, { ts: { seconds: 1764905400n, nanos: 0 } }),
    ];
    for (const event of events) {
      const fast = recordJcs(EventSchema, event, "", 9007199254740993n);
      expect(fast).toBeDefined();
      expect(fast).toBe(canonicalRecordViaTree("", 9007199254740993n, event));
    }
  });

  it("declines what only the original path may decide, which still refuses it", () => {
    const lone = create(EventSchema, { executionId: "a\uD800b" });
    expect(recordJcs(EventSchema, lone, "", 1)).toBeUndefined();
    expect(() => canonicalRecord("", 1, lone)).toThrow(NotCanonicalizableError);
    expect(recordJcs(EventSchema, create(EventSchema, {}), "\uDC00", 1)).toBeUndefined();
    const outOfRange = create(EventSchema, { ts: { seconds: 253402300800n, nanos: 0 } });
    expect(recordJcs(EventSchema, outOfRange, "", 1)).toBeUndefined();
    expect(() => canonicalRecord("", 1, outOfRange)).toThrow();
    const nonFinite = create(EventSchema, {
      body: { case: "tool", value: { args: { x: Number.NaN } } },
    });
    expect(recordJcs(EventSchema, nonFinite, "", 1)).toBeUndefined();
    expect(() => canonicalRecord("", 1, nonFinite)).toThrow();
  });
});
