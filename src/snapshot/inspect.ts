// The read-only validation walk over an actor's state graph before it is v8-serialized (docs/protocol.md §9.3).
// Invariant: every value v8 would silently degrade (unregistered class instances, built-in subclasses)
// or refuse (functions, symbols, promises, weak collections, proxies) is reported with the path of the
// first offender; the walk never mutates the graph.
import { types } from "node:util";
import { ErrorCode, HostError } from "../errors/index.js";
import { formatPath, type PathSegment } from "./path.js";
import type { KnownClasses } from "./known-classes.js";

/** A slot that pointed back at the actor itself; restore points it at the fresh instance. */
export interface SelfRef {
  readonly in: object;
  readonly key: unknown;
  /** true: `in` is a Map and `key` is the entry's key; false: `in[key]` is a property or index. */
  readonly map: boolean;
}

/** What the walk found: registered-class instances to re-prototype and back references to the actor. */
export interface StateGraphFacts {
  readonly tagged: object[];
  readonly names: string[];
  readonly selfRefs: SelfRef[];
}

const TYPED_PROTOS: ReadonlySet<object> = new Set<object>([
  Int8Array.prototype,
  Uint8Array.prototype,
  Uint8ClampedArray.prototype,
  Int16Array.prototype,
  Uint16Array.prototype,
  Int32Array.prototype,
  Uint32Array.prototype,
  Float32Array.prototype,
  Float64Array.prototype,
  BigInt64Array.prototype,
  BigUint64Array.prototype,
  DataView.prototype,
  Buffer.prototype,
]);

const ERROR_PROTOS: ReadonlySet<object> = new Set<object>([
  Error.prototype,
  EvalError.prototype,
  RangeError.prototype,
  ReferenceError.prototype,
  SyntaxError.prototype,
  TypeError.prototype,
  URIError.prototype,
]);

const BOXED_PROTOS: ReadonlySet<object> = new Set<object>([
  Number.prototype,
  String.prototype,
  Boolean.prototype,
  BigInt.prototype,
]);

function className(proto: object | null): string {
  if (proto === null) return "<null prototype>";
  const ctor: unknown = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && ctor.name !== "" ? ctor.name : "<anonymous class>";
}

function isNativeClass(proto: object): boolean {
  const ctor: unknown = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && Function.prototype.toString.call(ctor).includes("[native code]");
}

class StateInspector implements StateGraphFacts {
  readonly tagged: object[] = [];
  readonly names: string[] = [];
  readonly selfRefs: SelfRef[] = [];
  private readonly seen = new Set<object>();
  private readonly path: PathSegment[] = [];

  constructor(
    private readonly actor: object,
    private readonly known: KnownClasses,
  ) {}

  /** Walks the actor's own enumerable properties (the captured state). */
  inspectActor(): void {
    this.seen.add(this.actor);
    this.visitProps(this.actor);
  }

  private fail(what: string): never {
    throw new HostError(ErrorCode.FailedPrecondition, `snapshot: cannot serialize ${formatPath(this.path)}: ${what}`);
  }

  private visitProps(obj: object): void {
    const record = obj as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      this.path.push({ kind: "prop", key });
      this.visitSlot(obj, key, record[key], false);
      this.path.pop();
    }
  }

  /** A value stored where restore can re-point it (property, index, Map value). */
  private visitSlot(container: object, key: unknown, value: unknown, map: boolean): void {
    if (value === this.actor) {
      this.selfRefs.push({ in: container, key, map });
      return;
    }
    this.visit(value);
  }

  /** A value stored where restore cannot re-point it (Map key, Set member). */
  private visitFixed(value: unknown): void {
    if (value === this.actor)
      this.fail("reference back to the actor itself (only properties, array items and Map values may hold it)");
    this.visit(value);
  }

  private visit(value: unknown): void {
    switch (typeof value) {
      case "string":
      case "number":
      case "boolean":
      case "undefined":
      case "bigint":
        return;
      case "symbol":
        return this.fail("symbol");
      case "function":
        return this.fail(types.isProxy(value) ? "Proxy" : "function");
      case "object":
        if (value === null || this.seen.has(value)) return;
        this.seen.add(value);
        return this.visitObject(value);
      default:
        return this.fail(`value of type ${typeof value}`);
    }
  }

  private visitObject(value: object): void {
    if (types.isProxy(value)) return this.fail("Proxy");
    const proto: object | null = Object.getPrototypeOf(value);
    if (Array.isArray(value)) {
      if (proto !== Array.prototype) return this.fail(`Array subclass ${className(proto)}`);
      const items: readonly unknown[] = value;
      for (let i = 0; i < items.length; i++) {
        this.path.push({ kind: "index", index: i });
        this.visitSlot(items, i, items[i], false);
        this.path.pop();
      }
      return;
    }
    if (proto === Object.prototype || proto === null) return this.visitProps(value);
    if (types.isMap(value)) return this.visitMap(value, proto);
    if (types.isSet(value)) return this.visitSet(value, proto);
    if (types.isDate(value)) {
      if (proto !== Date.prototype) this.fail(`Date subclass ${className(proto)}`);
      return;
    }
    if (types.isRegExp(value)) {
      if (proto !== RegExp.prototype) this.fail(`RegExp subclass ${className(proto)}`);
      return;
    }
    if (types.isArrayBufferView(value)) {
      if (!TYPED_PROTOS.has(proto)) this.fail(`typed array subclass ${className(proto)}`);
      return;
    }
    if (types.isArrayBuffer(value)) {
      if (proto !== ArrayBuffer.prototype) this.fail(`ArrayBuffer subclass ${className(proto)}`);
      return;
    }
    if (types.isBoxedPrimitive(value) && !types.isSymbolObject(value)) {
      if (!BOXED_PROTOS.has(proto)) this.fail(`subclass ${className(proto)} of a boxed primitive`);
      return;
    }
    if (types.isNativeError(value)) return this.visitError(value, proto);
    const registered = this.known.nameOf(proto);
    if (registered !== undefined) {
      this.tagged.push(value);
      this.names.push(registered);
      return this.visitProps(value);
    }
    if (isNativeClass(proto)) return this.fail(className(proto));
    return this.fail(
      `instance of unregistered class ${className(proto)} (list it in the harness's snapshotClasses to keep its prototype)`,
    );
  }

  private visitMap(map: Map<unknown, unknown>, proto: object): void {
    if (proto !== Map.prototype) this.fail(`Map subclass ${className(proto)}`);
    let ordinal = 0;
    for (const [key, entry] of map) {
      this.path.push({ kind: "mapKey", ordinal });
      this.visitFixed(key);
      this.path.pop();
      this.path.push({ kind: "mapValue", key, ordinal });
      this.visitSlot(map, key, entry, true);
      this.path.pop();
      ordinal++;
    }
  }

  private visitSet(set: Set<unknown>, proto: object): void {
    if (proto !== Set.prototype) this.fail(`Set subclass ${className(proto)}`);
    let ordinal = 0;
    for (const member of set) {
      this.path.push({ kind: "setMember", ordinal });
      this.visitFixed(member);
      this.path.pop();
      ordinal++;
    }
  }

  private visitError(error: Error, proto: object): void {
    if (!ERROR_PROTOS.has(proto)) {
      this.fail(`Error subclass ${className(proto)} (v8 keeps only built-in error types; its fields would be lost)`);
    }
    if (Object.hasOwn(error, "cause")) {
      this.path.push({ kind: "prop", key: "cause" });
      this.visitFixed(error.cause);
      this.path.pop();
    }
  }
}

/**
 * Validates the actor's state graph and lists its registered-class instances and back references.
 * Throws HostError(FailedPrecondition) naming the first offending value's path.
 */
export function inspectActorState(actor: object, known: KnownClasses): StateGraphFacts {
  const inspector = new StateInspector(actor, known);
  try {
    inspector.inspectActor();
  } catch (err) {
    if (err instanceof RangeError) {
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `snapshot: state graph is too deeply nested to serialize (${err.message})`,
      );
    }
    throw err;
  }
  return inspector;
}
