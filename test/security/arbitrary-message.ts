// fast-check arbitraries for any protobuf-es message schema: every field may be absent or hold a
// hostile value (huge or lone-surrogate strings, extreme and negative int64s, unknown enum numbers,
// random bytes, nested messages). Invariant: every generated value is an init shape that `create` +
// `toBinary` accept, so the bytes on the wire are well-formed protobuf with adversarial content.
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import fc from "fast-check";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Strings a hostile client sends: plain, lone surrogates, control bytes, session-like, and huge. */
export function hostileString(known: readonly string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 24 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "\u0000",
        "\ud800",
        "sess-000000000000000000000000",
        "../../etc/passwd",
        "echo",
        "counter",
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => "x".repeat(n)) },
    ...(known.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...known) }] : []),
  );
}

function scalar(type: ScalarType, known: readonly string[]): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return hostileString(known);
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 64 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
      return fc.double();
    case ScalarType.FLOAT:
      return fc.float();
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1, 128, 129, 2 ** 31 - 1, -(2 ** 31)));
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return fc.oneof(
        fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
        fc.constantFrom(0n, 1n, -1n, 5n, INT64_MAX, INT64_MIN, 2n ** 53n + 1n),
      );
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    default: {
      const exhaustive: never = type;
      throw new Error(`unknown scalar type ${String(exhaustive)}`);
    }
  }
}

const JSON_VALUE = fc.jsonValue({ maxDepth: 2 });

function element(
  field: DescField,
  kind: "scalar" | "enum" | "message",
  depth: number,
  known: readonly string[],
): fc.Arbitrary<unknown> {
  switch (kind) {
    case "scalar":
      return field.scalar === undefined ? fc.constant(undefined) : scalar(field.scalar, known);
    case "enum":
      // Declared members and unknown numbers alike.
      return fc.oneof(
        fc.constantFrom(...(field.enum?.values.map((v) => v.number) ?? [0])),
        fc.integer({ min: -3, max: 10_000 }),
      );
    case "message":
      return field.message ? messageValue(field.message, depth - 1, known) : fc.constant(undefined);
    default: {
      const exhaustive: never = kind;
      throw new Error(`unknown element kind ${String(exhaustive)}`);
    }
  }
}

function messageValue(schema: DescMessage, depth: number, known: readonly string[]): fc.Arbitrary<unknown> {
  switch (schema.typeName) {
    case "google.protobuf.Struct":
      return fc.dictionary(fc.string({ maxLength: 8 }), JSON_VALUE, { maxKeys: 3 });
    case "google.protobuf.Value":
      return JSON_VALUE;
    case "google.protobuf.ListValue":
      return fc.array(JSON_VALUE, { maxLength: 3 });
    case "google.protobuf.Timestamp":
      return fc.record({
        seconds: fc.bigInt({ min: -62135596800n, max: 253402300799n }),
        nanos: fc.integer({ min: 0, max: 999_999_999 }),
      });
    default:
      if (schema.typeName.startsWith("google.protobuf.")) return fc.constant(undefined);
      return depth <= 0 ? fc.constant({}) : arbitraryInit(schema, { depth, known });
  }
}

function fieldValue(field: DescField, depth: number, known: readonly string[]): fc.Arbitrary<unknown> {
  switch (field.fieldKind) {
    case "scalar":
      return element(field, "scalar", depth, known);
    case "enum":
      return element(field, "enum", depth, known);
    case "message":
      return element(field, "message", depth, known);
    case "list":
      return fc.array(element(field, field.listKind, depth, known), { maxLength: 3 });
    case "map":
      if (field.mapKey !== ScalarType.STRING) return fc.constant({});
      return fc.dictionary(fc.string({ maxLength: 12 }), element(field, field.mapKind, depth, known), { maxKeys: 3 });
    default: {
      const exhaustive: never = field;
      throw new Error(`unknown field kind ${String(exhaustive)}`);
    }
  }
}

export interface ArbitraryOptions {
  /** Nesting depth for message fields (default 2). */
  readonly depth?: number;
  /** Strings worth hitting often (existing session uids, harness names). */
  readonly known?: readonly string[];
}

/** An init shape of `schema` with each field (or oneof) independently absent or hostile. */
export function arbitraryInit(schema: DescMessage, opts: ArbitraryOptions = {}): fc.Arbitrary<Record<string, unknown>> {
  const depth = opts.depth ?? 2;
  const known = opts.known ?? [];
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const member of schema.members) {
    if (member.kind === "oneof") {
      entries[member.localName] = fc.oneof(
        fc.constant(undefined),
        ...member.fields.map((f) => fieldValue(f, depth, known).map((value) => ({ case: f.localName, value }))),
      );
    } else {
      entries[member.localName] = fieldValue(member, depth, known);
    }
  }
  return fc.record(entries, { requiredKeys: [] }).map((init) => {
    for (const k of Object.keys(init)) if (init[k] === undefined) delete init[k];
    return init;
  });
}
