// The actor-state codec (docs/protocol.md §9.1): a harness instance's own enumerable data properties, v8-serialized,
// with registered-class instances restored onto their prototypes. Invariant: encode either produces
// bytes that decode to an equivalent graph (shared references and cycles included) or throws a
// HostError naming the offending path, and it never mutates the live actor.
//
// What is invisible to the codec (by design of v8 serialization, documented in docs/protocol.md §9.1):
// - symbol-keyed properties are skipped, and ES `#private` fields are not properties at all: both are
//   silently absent after restore (the conformance suite detects such state loss by behaviour);
// - non-enumerable properties are skipped; own accessors are invoked and stored as data;
// - objects with a null prototype come back with Object.prototype;
// - Errors keep only name (built-in type), message, stack and cause.
// Restored typed arrays/Buffers may be views into the decoded `bytes`: do not reuse that buffer.
import { deserialize, serialize } from "node:v8";
import { ErrorCode, HostError } from "../errors/index.js";
import { inspectActorState, type SelfRef } from "./inspect.js";
import { KnownClasses, type ClassList } from "./known-classes.js";

export type { ClassList } from "./known-classes.js";

/** Codec identifier stored inside every actor snapshot. */
export const ACTOR_CODEC = "v8/1";

/** Which code wrote a snapshot: the harness's descriptor version and its state schema tag. */
export interface StateTag {
  readonly version: string;
  readonly schema: string;
}

/**
 * Turns the captured state of another version into this version's (docs/versioning.md). Returns the
 * new state, or undefined when the code does not know `from` (the restore is then refused).
 */
export type StateMigration = (
  state: Record<string, unknown>,
  fromVersion: string,
  fromSchema: string,
) => Record<string, unknown> | undefined;

export interface ActorCodecOptions {
  readonly classes?: ClassList;
  /** Encode: stored in the snapshot. Decode: the running code's tag, checked against the stored one. */
  readonly tag?: StateTag;
  /** Decode: applied when the stored tag differs from `tag`. */
  readonly migrate?: StateMigration;
}

/**
 * The serialized envelope. It holds references into the live graph (not copies): v8 keeps identity,
 * so `tagged[i]` and the slots named by `selfRefs` are the very objects inside `root`.
 */
interface Envelope {
  codec: string;
  /** The writing harness's version and state schema (absent in snapshots written before versioning). */
  harnessVersion?: string;
  stateSchema?: string;
  root: object;
  tagged: object[];
  names: string[];
  selfRefs: SelfRef[];
}

const isObject = (v: unknown): v is object => typeof v === "object" && v !== null;

/**
 * Whether a deserialized value has the envelope's shape: codec string, root object, `tagged` objects
 * and `names` strings, `selfRefs` entries `{ in: object, map: boolean }` (key: anything). A direct
 * check rather than a schema parse: it runs on every restore and must not rebuild the graph.
 */
function isEnvelope(raw: unknown): raw is Envelope {
  if (!isObject(raw)) return false;
  const e = raw as Partial<Record<keyof Envelope, unknown>>;
  if (typeof e.codec !== "string" || !isObject(e.root)) return false;
  if (!Array.isArray(e.tagged) || !Array.isArray(e.names) || !Array.isArray(e.selfRefs)) return false;
  for (let i = 0; i < e.tagged.length; i++) if (!isObject(e.tagged[i])) return false;
  for (let i = 0; i < e.names.length; i++) if (typeof e.names[i] !== "string") return false;
  for (let i = 0; i < e.selfRefs.length; i++) {
    const ref: unknown = e.selfRefs[i];
    if (!isObject(ref)) return false;
    const r = ref as { in?: unknown; map?: unknown };
    if (!isObject(r.in) || typeof r.map !== "boolean") return false;
  }
  return e.tagged.length === e.names.length;
}

/** Serializes the actor's own enumerable data properties; throws FailedPrecondition naming the first bad path. */
export function encodeActor(instance: object, opts?: ActorCodecOptions): Uint8Array {
  const known = new KnownClasses(opts?.classes, Object.getPrototypeOf(instance) as object | null);
  const facts = inspectActorState(instance, known);
  const envelope: Envelope = {
    codec: ACTOR_CODEC,
    ...(opts?.tag ? { harnessVersion: opts.tag.version, stateSchema: opts.tag.schema } : {}),
    root: instance,
    tagged: facts.tagged,
    names: facts.names,
    selfRefs: facts.selfRefs,
  };
  try {
    return serialize(envelope);
  } catch (err) {
    // The walk rejects everything we know of; this is the net for what it cannot see (e.g. a
    // function inside an array's extra property or an Error's own field).
    const reason = err instanceof Error ? err.message : String(err);
    throw new HostError(ErrorCode.FailedPrecondition, `snapshot: cannot serialize state: ${reason}`, { cause: err });
  }
}

/** The stored tag of a snapshot, if it carries one (read without restoring anything). */
export function snapshotTag(bytes: Uint8Array): StateTag | undefined {
  const e = parseEnvelope(bytes);
  return typeof e.harnessVersion === "string" ? { version: e.harnessVersion, schema: e.stateSchema ?? "" } : undefined;
}

/**
 * The captured state to assign: as stored when the snapshot carries no tag (written before versioning)
 * or the running code's tag; else what the code's migration makes of it — refused FAILED_PRECONDITION
 * when there is none or it does not know the stored version. The bytes are intact, so this is never
 * DATA_LOSS: other code (the writing version) can still restore them.
 */
function migrated(envelope: Envelope, opts: ActorCodecOptions | undefined): Record<string, unknown> {
  const root = envelope.root as Record<string, unknown>;
  const want = opts?.tag;
  if (want === undefined || typeof envelope.harnessVersion !== "string") return root;
  const from: StateTag = { version: envelope.harnessVersion, schema: envelope.stateSchema ?? "" };
  if (from.version === want.version && from.schema === want.schema) return root;
  const next = opts?.migrate?.({ ...root }, from.version, from.schema);
  if (next === undefined || typeof next !== "object" || next === null) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `snapshot: written by harness version "${from.version}" (state schema "${from.schema}"); this code is version "${want.version}" (state schema "${want.schema}") and ${opts?.migrate ? "its migrate() does not know that version" : "declares no migrate()"}; restore it with the version that wrote it, or add a migration`,
    );
  }
  return next;
}

function parseEnvelope(bytes: Uint8Array): Envelope {
  let raw: unknown;
  try {
    raw = deserialize(bytes);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new HostError(ErrorCode.DataLoss, `snapshot: bytes are not a v8 actor snapshot: ${reason}`, { cause: err });
  }
  if (isObject(raw) && "codec" in raw && typeof raw.codec === "string" && raw.codec !== ACTOR_CODEC) {
    throw new HostError(
      ErrorCode.DataLoss,
      `snapshot: unknown actor codec ${JSON.stringify(raw.codec)} (expected ${ACTOR_CODEC})`,
    );
  }
  if (!isEnvelope(raw)) {
    throw new HostError(ErrorCode.DataLoss, "snapshot: bytes are not a v8 actor snapshot (malformed envelope)");
  }
  return raw;
}

/**
 * Restores a snapshot onto `fresh` (a just-constructed harness instance, so its class and methods are
 * kept): own enumerable properties not in the snapshot are deleted, captured ones assigned. Returns `fresh`.
 */
export function decodeActor<T extends object>(bytes: Uint8Array, fresh: T, opts?: ActorCodecOptions): T {
  const envelope = parseEnvelope(bytes);
  const known = new KnownClasses(opts?.classes, Object.getPrototypeOf(fresh) as object | null);
  envelope.tagged.forEach((obj, i) => {
    const name = envelope.names[i] ?? "";
    const proto = known.protoOf(name);
    if (proto === undefined) {
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `snapshot: state holds an instance of class ${name}, which is not registered`,
      );
    }
    if (Object.getPrototypeOf(obj) !== Object.prototype) {
      throw new HostError(ErrorCode.DataLoss, `snapshot: tagged instance of ${name} is not a plain object`);
    }
    Object.setPrototypeOf(obj, proto);
  });
  for (const ref of envelope.selfRefs) {
    if (ref.map) {
      if (!(ref.in instanceof Map)) throw new HostError(ErrorCode.DataLoss, "snapshot: malformed back reference");
      ref.in.set(ref.key, fresh);
    } else {
      Object.defineProperty(ref.in, String(ref.key), {
        value: fresh,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  const captured = migrated(envelope, opts);
  const keep = new Set(Object.keys(captured));
  for (const key of Object.keys(fresh)) {
    if (!keep.has(key)) Reflect.deleteProperty(fresh, key);
  }
  for (const key of keep) {
    Object.defineProperty(fresh, key, { value: captured[key], writable: true, enumerable: true, configurable: true });
  }
  return fresh;
}
