// A direct canonical writer: the JCS (RFC 8785) text of a message's proto3-JSON form (proto field names,
// enum names, unset fields omitted), written straight from the message without building the JSON tree.
// Invariant: for every message it accepts, protoJcs(schema, m) === jcs(toJson(schema, m,
// { useProtoFieldName: true })), byte for byte; anything it is not sure to write the same way (a lone
// surrogate, Any, FieldMask, a value of the wrong type, a timestamp out of range, very deep nesting) it
// declines — returns undefined — and the caller takes that original path, so results and errors are
// unchanged. test/canon/proto-jcs.test.ts compares the two over random events of every kind.
import { ScalarType, type DescEnum, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { plainJcs } from "./jcs.js";

/** Thrown (one shared instance, no stack) when a value must take the original path. */
const DECLINE: unique symbol = Symbol("decline");

function decline(): never {
  throw DECLINE;
}

/** Past this nesting depth the writer declines (the original path decides, as jcs's own fast path does). */
const MAX_DEPTH = 200;

/** google.protobuf.FieldDescriptorProto / FeatureSet presence: IMPLICIT and LEGACY_REQUIRED. */
const IMPLICIT = 2;
const LEGACY_REQUIRED = 3;

const TIMESTAMP_MS_MIN = Date.parse("0001-01-01T00:00:00Z");
const TIMESTAMP_MS_MAX = Date.parse("9999-12-31T23:59:59Z");
const DURATION_SECONDS_MAX = 315576000000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed: (s: string) => boolean =
  typeof String.prototype.isWellFormed === "function" ? (s) => s.isWellFormed() : (s) => !LONE_SURROGATE.test(s);

/** A JSON string as JCS writes it (JSON.stringify's escaping); a lone surrogate declines. */
function str(s: string): string {
  if (!wellFormed(s)) decline();
  return JSON.stringify(s);
}

/** A finite number as JCS writes it (ECMAScript Number-to-String, which JSON.stringify uses). */
function num(n: number): string {
  if (!Number.isFinite(n)) decline();
  return JSON.stringify(n);
}

type Obj = Record<string, unknown>;
type ValueWriter = (value: unknown, depth: number) => string;
/** One field's `"name":value`, or undefined when proto3-JSON omits it. */
type FieldWriter = (message: Obj, depth: number) => string | undefined;

function asObj(value: unknown): Obj {
  if (typeof value !== "object" || value === null) decline();
  return value as Obj;
}

/** The JCS text of an object whose members `write` yields in any order: keys sorted by UTF-16 code unit. */
function sortedObject(keys: string[], write: (key: string) => string): string {
  keys.sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? "" : ","}${str(key)}:${write(key)}`;
  }
  return `${out}}`;
}

/** A google.protobuf.Struct field's local form (a plain JSON object), as toJson round-trips it: written by
 * jcs's own one-pass writer, which gives up (and so declines) on anything not plain or nested too deep. */
function jsonObject(value: unknown, depth: number): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) decline();
  return plainJcs(value, depth) ?? decline();
}

/** google.protobuf.Value / Struct / ListValue in message form (inside a Value), as toJson writes them. */
function valueMessage(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) decline();
  const kind = asObj(asObj(value).kind);
  switch (kind.case) {
    case "nullValue":
      return "null";
    case "numberValue":
      if (typeof kind.value !== "number") decline();
      return num(kind.value);
    case "boolValue":
      if (typeof kind.value !== "boolean") decline();
      return kind.value ? "true" : "false";
    case "stringValue":
      if (typeof kind.value !== "string") decline();
      return str(kind.value);
    case "structValue":
      return structMessage(kind.value, depth + 1);
    case "listValue":
      return listValueMessage(kind.value, depth + 1);
    default:
      return decline();
  }
}

function structMessage(value: unknown, depth: number): string {
  const fields = asObj(asObj(value).fields);
  return sortedObject(Object.keys(fields), (k) => valueMessage(fields[k], depth + 1));
}

function listValueMessage(value: unknown, depth: number): string {
  const values = asObj(value).values;
  if (!Array.isArray(values)) decline();
  let out = "[";
  for (let i = 0; i < values.length; i++) out += `${i === 0 ? "" : ","}${valueMessage(values[i], depth + 1)}`;
  return `${out}]`;
}

/** The last whole second timestamp() formatted, and its "YYYY-MM-DDTHH:MM:SS" (records of one second share it). */
let lastSecondMs = Number.NaN;
let lastSecondText = "";

function timestamp(value: unknown): string {
  const m = asObj(value);
  const { seconds, nanos } = m;
  if ((typeof seconds !== "bigint" && typeof seconds !== "number") || typeof nanos !== "number") decline();
  const ms = Number(seconds) * 1000;
  if (!(ms >= TIMESTAMP_MS_MIN && ms <= TIMESTAMP_MS_MAX) || !(nanos >= 0 && nanos <= 999999999)) decline();
  if (!Number.isInteger(Number(seconds)) || !Number.isInteger(nanos)) decline();
  let z = "Z";
  if (nanos > 0) {
    const digits = (nanos + 1000000000).toString().substring(1);
    if (digits.substring(3) === "000000") z = `.${digits.substring(0, 3)}Z`;
    else if (digits.substring(6) === "000") z = `.${digits.substring(0, 6)}Z`;
    else z = `.${digits}Z`;
  }
  // A whole second in 0001..9999 formats as "YYYY-MM-DDTHH:MM:SS.000Z"; toJson replaces its ".000Z" with z.
  if (ms !== lastSecondMs) {
    lastSecondText = new Date(ms).toISOString().substring(0, 19);
    lastSecondMs = ms;
  }
  return `"${lastSecondText}${z}"`;
}

function duration(value: unknown): string {
  const m = asObj(value);
  const { seconds, nanos } = m;
  if ((typeof seconds !== "bigint" && typeof seconds !== "number") || typeof nanos !== "number") decline();
  const s = Number(seconds);
  if (!(s >= -DURATION_SECONDS_MAX && s <= DURATION_SECONDS_MAX) || !Number.isInteger(nanos)) decline();
  if ((s > 0 && nanos < 0) || (s < 0 && nanos > 0) || nanos <= -1e9 || nanos >= 1e9) decline();
  let text = seconds.toString();
  if (nanos !== 0) {
    let digits = Math.abs(nanos).toString();
    digits = "0".repeat(9 - digits.length) + digits;
    if (digits.substring(3) === "000000") digits = digits.substring(0, 3);
    else if (digits.substring(6) === "000") digits = digits.substring(0, 6);
    text += `.${digits}`;
    if (nanos < 0 && s === 0) text = `-${text}`;
  }
  return str(`${text}s`);
}

function scalarWriter(scalar: ScalarType): ValueWriter {
  switch (scalar) {
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
      return (v) => {
        if (typeof v !== "number") decline();
        return num(v);
      };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (v) => {
        if (typeof v !== "number") decline();
        if (Number.isNaN(v)) return '"NaN"';
        if (v === Number.POSITIVE_INFINITY) return '"Infinity"';
        if (v === Number.NEGATIVE_INFINITY) return '"-Infinity"';
        return num(v);
      };
    case ScalarType.STRING:
      return (v) => {
        if (typeof v !== "string") decline();
        return str(v);
      };
    case ScalarType.BOOL:
      return (v) => {
        if (typeof v !== "boolean") decline();
        return v ? "true" : "false";
      };
    case ScalarType.BYTES:
      return (v) => {
        if (!(v instanceof Uint8Array)) decline();
        return `"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64")}"`;
      };
    default:
      // The 64-bit integers: a decimal string.
      return (v) => {
        if (typeof v === "bigint") return `"${v}"`;
        if (typeof v === "string" || (typeof v === "number" && Number.isInteger(v))) return str(v.toString());
        return decline();
      };
  }
}

function enumWriter(desc: DescEnum): ValueWriter {
  if (desc.typeName === "google.protobuf.NullValue") {
    return (v) => {
      if (typeof v !== "number") decline();
      return "null";
    };
  }
  const names = new Map<number, string>();
  for (const value of desc.values) {
    const name = desc.value[value.number]?.jsonName;
    if (name !== undefined) names.set(value.number, str(name));
  }
  return (v) => {
    if (typeof v !== "number") decline();
    return names.get(v) ?? num(v);
  };
}

const compiled = new WeakMap<DescMessage, ValueWriter>();

/** The writer for a message-typed value in its local form: Struct fields hold a JSON object, singular
 * wrapper fields outside a oneof hold the bare scalar (as @bufbuild/protobuf's localMessageMapper has it). */
function messageValueWriter(field: DescField & { message: DescMessage }, singular: boolean): ValueWriter {
  const desc = field.message;
  if (desc.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value") {
    return jsonObject;
  }
  if (singular && field.oneof === undefined && isWrapperDesc(desc)) {
    const inner = desc.fields[0];
    if (inner?.fieldKind !== "scalar") return decline;
    return scalarWriter(inner.scalar);
  }
  return messageWriter(desc);
}

function valueWriterOf(field: DescField): ValueWriter {
  switch (field.fieldKind) {
    case "scalar":
      return scalarWriter(field.scalar);
    case "enum":
      return enumWriter(field.enum);
    case "message":
      return messageValueWriter(field, true);
    case "list":
      switch (field.listKind) {
        case "scalar":
          return scalarWriter(field.scalar);
        case "enum":
          return enumWriter(field.enum);
        default:
          return messageValueWriter(field, false);
      }
    case "map":
      switch (field.mapKind) {
        case "scalar":
          return scalarWriter(field.scalar);
        case "enum":
          return enumWriter(field.enum);
        default:
          return messageValueWriter(field, false);
      }
  }
}

function fieldWriter(field: DescField): FieldWriter {
  const key = `${JSON.stringify(field.name)}:`;
  const local = field.localName;
  // Resolved on first use, so recursive message types compile.
  let writeValue: ValueWriter | undefined;
  const write = (v: unknown, depth: number): string => {
    writeValue ??= valueWriterOf(field);
    return writeValue(v, depth);
  };
  if (field.fieldKind === "list") {
    return (m, depth) => {
      const items = m[local];
      if (!Array.isArray(items)) return decline();
      if (items.length === 0) return undefined;
      let out = `${key}[`;
      for (let i = 0; i < items.length; i++) out += `${i === 0 ? "" : ","}${write(items[i], depth + 1)}`;
      return `${out}]`;
    };
  }
  if (field.fieldKind === "map") {
    return (m, depth) => {
      const record = asObj(m[local]);
      const keys = Object.keys(record);
      if (keys.length === 0) return undefined;
      return key + sortedObject(keys, (k) => write(record[k], depth + 1));
    };
  }
  if (field.oneof !== undefined) {
    const oneof = field.oneof.localName;
    return (m, depth) => {
      const adt = asObj(m[oneof]);
      return adt.case === local ? key + write(adt.value, depth) : undefined;
    };
  }
  if (field.presence !== IMPLICIT) {
    const required = field.presence === LEGACY_REQUIRED;
    return (m, depth) => {
      const v = m[local];
      if (v !== undefined && Object.hasOwn(m, local)) return key + write(v, depth);
      return required ? decline() : undefined;
    };
  }
  if (field.fieldKind === "enum") {
    const zero = field.enum.values[0]?.number;
    return (m, depth) => {
      const v = m[local];
      return v !== zero ? key + write(v, depth) : undefined;
    };
  }
  if (field.fieldKind !== "scalar") return decline;
  switch (field.scalar) {
    case ScalarType.BOOL:
      return (m, depth) => (m[local] !== false ? key + write(m[local], depth) : undefined);
    case ScalarType.STRING:
      return (m, depth) => (m[local] !== "" ? key + write(m[local], depth) : undefined);
    case ScalarType.BYTES:
      return (m, depth) => {
        const v = m[local];
        return !(v instanceof Uint8Array) || v.byteLength > 0 ? key + write(v, depth) : undefined;
      };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (m, depth) => (!Object.is(m[local], 0) ? key + write(m[local], depth) : undefined);
    default:
      // Loose comparison, as toJson's: 0n, 0 and "0" are all the zero value.
      // biome-ignore lint/suspicious/noDoubleEquals: matches @bufbuild/protobuf's implicit-presence check
      return (m, depth) => (m[local] != 0 ? key + write(m[local], depth) : undefined);
  }
}

function messageWriter(desc: DescMessage): ValueWriter {
  const known = compiled.get(desc);
  if (known !== undefined) return known;
  const typeName = desc.typeName;
  const checked =
    (inner: ValueWriter): ValueWriter =>
    (v, depth) => {
      if (depth > MAX_DEPTH || asObj(v).$typeName !== typeName) decline();
      return inner(v, depth);
    };
  const special = SPECIAL_WRITERS.get(typeName);
  if (special !== undefined) return remember(desc, special === decline ? decline : checked(special));
  if (isWrapperDesc(desc)) {
    const inner = desc.fields[0];
    if (inner?.fieldKind !== "scalar") return remember(desc, decline);
    const scalar = scalarWriter(inner.scalar);
    const zero = inner.scalar === ScalarType.STRING ? "" : inner.scalar === ScalarType.BOOL ? false : undefined;
    return remember(
      desc,
      checked((v) => {
        const value = (v as Obj)[inner.localName];
        if (value !== undefined) return scalar(value, 0);
        return zero !== undefined ? scalar(zero, 0) : decline();
      }),
    );
  }
  if (typeName.startsWith("google.protobuf.") && desc.fields.length > 0 && !isPlainWkt(typeName)) {
    // Another well-known type: take the original path rather than guess its JSON form.
    return remember(desc, decline);
  }
  if (desc.fields.some((f) => f.name === "__proto__" || f.jsonName === "__proto__")) return remember(desc, decline);
  const fields = desc.fields.concat().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const writers: FieldWriter[] = [];
  const writer = checked((v, depth) => {
    const m = v as Obj;
    let out = "{";
    let first = true;
    for (let i = 0; i < writers.length; i++) {
      const part = (writers[i] as FieldWriter)(m, depth + 1);
      if (part === undefined) continue;
      out += first ? part : `,${part}`;
      first = false;
    }
    return `${out}}`;
  });
  // Remembered before its fields are compiled, so a recursive message type finds itself.
  compiled.set(desc, writer);
  for (const f of fields) writers.push(fieldWriter(f));
  return writer;
}

function remember(desc: DescMessage, writer: ValueWriter): ValueWriter {
  compiled.set(desc, writer);
  return writer;
}

/** Well-known types with a JSON form of their own (checked for type and depth), or decline for those left to toJson. */
const SPECIAL_WRITERS = new Map<string, ValueWriter>([
  ["google.protobuf.Timestamp", timestamp],
  ["google.protobuf.Duration", duration],
  ["google.protobuf.Struct", structMessage],
  ["google.protobuf.Value", valueMessage],
  ["google.protobuf.ListValue", listValueMessage],
  ["google.protobuf.Any", decline],
  ["google.protobuf.FieldMask", decline],
]);

/** Well-known types whose JSON form is the ordinary message form (Empty has no fields). */
function isPlainWkt(typeName: string): boolean {
  return typeName === "google.protobuf.Empty";
}

/** The writer's own result, or DECLINE rethrown as undefined; any other error is a bug and propagates. */
function attempt(write: () => string): string | undefined {
  try {
    return write();
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  }
}

/**
 * jcs(toJson(schema, message, { useProtoFieldName: true })) written directly, or undefined when the
 * message holds something only the original path may decide.
 */
export function protoJcs<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string | undefined {
  const write = messageWriter(schema);
  return attempt(() => write(message, 0));
}

/**
 * jcs({ event: <proto3-JSON of message>, prev_hash: prevHash, seq: "<seq>" }) written directly (the
 * journal record's canonical form), or undefined as protoJcs.
 */
export function recordJcs<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  prevHash: string,
  seq: number | bigint,
): string | undefined {
  const write = messageWriter(schema);
  return attempt(() => `{"event":${write(message, 0)},"prev_hash":${str(prevHash)},"seq":${str(seq.toString())}}`);
}
