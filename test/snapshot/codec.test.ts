// The actor-state codec (docs/protocol.md §9.1–§9.3): round trips, registered classes with identity, and loud failures
// that name the path of the offending value while leaving the actor untouched.
import { serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { ACTOR_CODEC, decodeActor, encodeActor } from "../../src/snapshot/index.js";

class Holder {
  [key: string]: unknown;
}

function roundTrip<T>(value: T): T {
  const src = new Holder();
  src.value = value;
  const out = decodeActor(encodeActor(src), new Holder());
  return out.value as T;
}

function encodeError(instance: object, classes?: Parameters<typeof encodeActor>[1]): HostError {
  try {
    encodeActor(instance, classes);
  } catch (err) {
    expect(err).toBeInstanceOf(HostError);
    return err as HostError;
  }
  throw new Error("encode unexpectedly succeeded");
}

class Counter {
  count = 0;
  log: string[] = [];
  bump(note: string): number {
    this.log.push(note);
    return ++this.count;
  }
}

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
  norm1(): number {
    return Math.abs(this.x) + Math.abs(this.y);
  }
}

class TreeNode {
  children: TreeNode[] = [];
  self: TreeNode | undefined;
  parent: TreeNode | undefined;
  constructor(public label: string) {}
  describe(): string {
    return `${this.label}(${this.children.map((c) => c.describe()).join(",")})`;
  }
}

describe("snapshot codec: supported kinds", () => {
  it("exports the codec id", () => {
    expect(ACTOR_CODEC).toBe("v8/1");
  });

  it("round-trips every built-in kind", () => {
    const value = {
      str: "héllo",
      num: -1.5,
      nan: Number.NaN,
      bool: true,
      nil: null,
      undef: undefined,
      big: 12345678901234567890n,
      arr: [1, "two", [3]],
      map: new Map<unknown, unknown>([
        ["k", 1],
        [2, { nested: true }],
      ]),
      set: new Set([1, "a", 3n]),
      date: new Date("2024-01-02T03:04:05Z"),
      re: /ab+c/gi,
      u8: new Uint8Array([1, 2, 3]),
      f32: new Float32Array([0.5, 1.5]),
      big64: new BigInt64Array([1n, -2n]),
      buf: Buffer.from("buffer"),
      ab: new Uint8Array([9, 8]).buffer,
      err: new TypeError("boom"),
      boxed: Object(7) as unknown,
    };
    const out = roundTrip(value);
    expect(out).toEqual(value);
    expect(out.map).toBeInstanceOf(Map);
    expect(out.set).toBeInstanceOf(Set);
    expect(out.date).toBeInstanceOf(Date);
    expect(out.re.flags).toBe("gi");
    expect(out.f32).toBeInstanceOf(Float32Array);
    expect(Buffer.isBuffer(out.buf)).toBe(true);
    expect(out.err).toBeInstanceOf(TypeError);
    expect(out.err.message).toBe("boom");
    expect(out.ab).toBeInstanceOf(ArrayBuffer);
  });

  it("preserves shared references and cycles in plain graphs", () => {
    const shared = { n: 1 };
    const cyc: Record<string, unknown> = { name: "c" };
    cyc.me = cyc;
    const out = roundTrip({ a: shared, b: shared, list: [shared], cyc, m: new Map([["s", shared]]) });
    expect(out.a).toBe(out.b);
    expect(out.list[0]).toBe(out.a);
    expect(out.m.get("s")).toBe(out.a);
    expect(out.cyc.me).toBe(out.cyc);
  });

  it("restores a harness-like class into a fresh instance whose methods keep working", () => {
    const live = new Counter();
    live.bump("a");
    live.bump("b");
    const bytes = encodeActor(live);
    const fresh = new Counter();
    const restored = decodeActor(bytes, fresh);
    expect(restored).toBe(fresh);
    expect(restored.count).toBe(2);
    expect(restored.bump("c")).toBe(3);
    expect(restored.log).toEqual(["a", "b", "c"]);
    expect(live.log).toEqual(["a", "b"]);
  });

  it("deletes fresh own properties the snapshot does not hold and keeps captured ones", () => {
    const src = new Holder();
    src.kept = 1;
    const fresh = new Holder();
    fresh.extra = "from constructor";
    fresh.kept = 99;
    decodeActor(encodeActor(src), fresh);
    expect(Object.keys(fresh)).toEqual(["kept"]);
    expect(fresh.kept).toBe(1);
  });

  it("restores back references to the actor itself onto the fresh instance", () => {
    const src = new Holder();
    src.self = src;
    src.child = { owner: src, list: [src] };
    src.byName = new Map([["me", src]]);
    const fresh = decodeActor(encodeActor(src), new Holder());
    const child = fresh.child as { owner: unknown; list: unknown[] };
    expect(fresh.self).toBe(fresh);
    expect(child.owner).toBe(fresh);
    expect(child.list[0]).toBe(fresh);
    expect((fresh.byName as Map<string, unknown>).get("me")).toBe(fresh);
  });

  it("implicitly registers the actor's own class for nested instances of it", () => {
    const outer = new Counter();
    const inner = new Counter();
    inner.count = 5;
    (outer as unknown as Record<string, unknown>).sub = inner;
    const fresh = decodeActor(encodeActor(outer), new Counter());
    const sub = (fresh as unknown as Record<string, unknown>).sub as Counter;
    expect(sub).toBeInstanceOf(Counter);
    expect(sub.bump("x")).toBe(6);
  });
});

describe("snapshot codec: registered classes", () => {
  const classes = [Point, TreeNode];

  it("restores prototypes inside Maps, Sets and arrays with shared references", () => {
    const p = new Point(1, -2);
    const src = new Holder();
    src.x = p;
    src.y = p;
    src.arr = [p, new Point(3, 4)];
    src.map = new Map<unknown, unknown>([
      ["p", p],
      [p, "as key"],
    ]);
    src.set = new Set([p]);
    const a = decodeActor(encodeActor(src, { classes }), new Holder(), { classes });
    const x = a.x as Point;
    expect(x).toBeInstanceOf(Point);
    expect(x.norm1()).toBe(3);
    expect(a.x).toBe(a.y);
    expect((a.arr as Point[])[0]).toBe(x);
    expect((a.arr as Point[])[1]?.norm1()).toBe(7);
    const map = a.map as Map<unknown, unknown>;
    expect(map.get("p")).toBe(x);
    expect(map.get(x)).toBe("as key");
    expect([...(a.set as Set<unknown>)][0]).toBe(x);
  });

  it("restores cycles through class instances", () => {
    const root = new TreeNode("root");
    const leaf = new TreeNode("leaf");
    root.children.push(leaf);
    leaf.parent = root;
    root.self = root;
    const src = new Holder();
    src.tree = root;
    const out = decodeActor(encodeActor(src, { classes }), new Holder(), { classes });
    const node = out.tree as TreeNode;
    expect(node).toBeInstanceOf(TreeNode);
    expect(node.self).toBe(node);
    expect(node.children[0]?.parent).toBe(node);
    expect(node.describe()).toBe("root(leaf())");
  });

  it("refuses two registered classes with the same name", () => {
    const A = class Same {};
    const B = class Same {};
    const src = new Holder();
    expect(encodeError(src, { classes: [A, B] }).code).toBe(ErrorCode.InvalidArgument);
  });

  it("refuses an instance of an unregistered class, naming its path", () => {
    const src = new Holder();
    src.items = [{ at: new Point(0, 0) }];
    const err = encodeError(src);
    expect(err.code).toBe(ErrorCode.FailedPrecondition);
    expect(err.message).toContain("state.items[0].at: instance of unregistered class Point");
  });

  it("refuses decoding when a stored class is no longer registered", () => {
    const src = new Holder();
    src.p = new Point(1, 1);
    const bytes = encodeActor(src, { classes });
    expect(() => decodeActor(bytes, new Holder())).toThrow(/class Point, which is not registered/);
  });
});

describe("snapshot codec: loud failures", () => {
  it("names the path of a function deep in a Map in an array", () => {
    const src = new Holder();
    src.cache = new Map<string, unknown>([["k", [1, 2, () => 3]]]);
    const err = encodeError(src);
    expect(err.code).toBe(ErrorCode.FailedPrecondition);
    expect(err.message).toContain('state.cache.get("k")[2]: function');
  });

  it("names paths for symbols, promises, weak maps, proxies and odd keys", () => {
    const cases: Array<[unknown, string]> = [
      [Symbol("s"), 'state["odd key"].v: symbol'],
      [Promise.resolve(1), 'state["odd key"].v: Promise'],
      [new WeakMap(), 'state["odd key"].v: WeakMap'],
      [new Proxy({}, {}), 'state["odd key"].v: Proxy'],
      [new Set([1, () => 1]), 'state["odd key"].v.<set member #1>: function'],
      [new Map([[7, Symbol("x")]]), 'state["odd key"].v.get(7): symbol'],
    ];
    for (const [bad, expected] of cases) {
      const src = new Holder();
      src["odd key"] = { v: bad };
      expect(encodeError(src).message).toContain(expected);
    }
  });

  it("leaves the instance unchanged and usable after a failed encode", () => {
    const live = new Counter();
    live.bump("a");
    const cache = new Map<string, unknown>([["fn", () => 1]]);
    (live as unknown as Record<string, unknown>).cache = cache;
    const before = { keys: Object.keys(live), log: [...live.log] };
    expect(encodeError(live).code).toBe(ErrorCode.FailedPrecondition);
    expect(Object.keys(live)).toEqual(before.keys);
    expect(live.log).toEqual(before.log);
    expect((live as unknown as Record<string, unknown>).cache).toBe(cache);
    expect(live.bump("b")).toBe(2);
  });

  it("drops #private fields (documented: the state is silently absent after restore)", () => {
    class Secretive {
      #hidden = 0;
      visible = 0;
      bump(): void {
        this.#hidden++;
        this.visible++;
      }
      hidden(): number {
        return this.#hidden;
      }
    }
    const live = new Secretive();
    live.bump();
    live.bump();
    const restored = decodeActor(encodeActor(live), new Secretive());
    expect(restored.visible).toBe(2);
    expect(restored.hidden()).toBe(0);
  });

  it("drops symbol-keyed properties (documented)", () => {
    const key = Symbol("k");
    const src = new Holder() as Holder & { [key]?: number };
    src[key] = 1;
    src.plain = 2;
    const out = decodeActor(encodeActor(src), new Holder()) as Holder & { [key]?: number };
    expect(out.plain).toBe(2);
    expect(out[key]).toBeUndefined();
  });

  it("refuses garbage and foreign bytes with DataLoss", () => {
    const garbage = [
      new Uint8Array([1, 2, 3, 4]),
      new Uint8Array(0),
      serialize({ hello: "world" }),
      serialize({ codec: "v8/9", root: {} }),
    ];
    for (const bytes of garbage) {
      try {
        decodeActor(bytes, new Holder());
        expect.unreachable("decode accepted garbage");
      } catch (err) {
        expect(err).toBeInstanceOf(HostError);
        expect((err as HostError).code).toBe(ErrorCode.DataLoss);
      }
    }
  });
});

describe("snapshot codec: property", () => {
  const leaf = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
  );
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.array(tie("tree"), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie("tree"), { maxKeys: 4 }),
      fc
        .array(fc.tuple(fc.oneof(fc.string(), fc.integer()), tie("tree")), { maxLength: 3 })
        .map((entries) => new Map(entries)),
      fc.array(fc.oneof(fc.string(), fc.integer(), fc.bigInt()), { maxLength: 4 }).map((items) => new Set(items)),
    ),
  }));

  it("random JSON-ish graphs with Maps, Sets, Dates and bigints round-trip deep-equal", () => {
    fc.assert(
      fc.property(tree, (value) => {
        expect(roundTrip(value)).toEqual(value);
      }),
      { numRuns: 150 },
    );
  });
});
