// The classes whose instances an actor snapshot restores with their prototypes (docs/protocol.md §9.2).
// Invariant: a class is identified by its name, one name maps to exactly one prototype, and the
// actor's own class is always known (under a reserved name, so renaming it never breaks a restore).
import { ErrorCode, HostError } from "../errors/index.js";

/** Classes a harness registers so that their instances survive a snapshot with their prototypes. */
export type ClassList = readonly (abstract new (...args: never[]) => unknown)[];

/** Name under which instances of the actor's own class (nested anywhere) are tagged. */
export const ACTOR_CLASS_NAME = "<actor>";

export class KnownClasses {
  private readonly nameByProto = new Map<object, string>();
  private readonly protoByName = new Map<string, object>();

  /** `actorProto` is the prototype of the harness instance (encode) or of the fresh one (decode). */
  constructor(classes: ClassList | undefined, actorProto: object | null) {
    for (const cls of classes ?? []) {
      const proto: unknown = cls.prototype;
      if (typeof proto !== "object" || proto === null) {
        throw new HostError(ErrorCode.InvalidArgument, "snapshot: a registered class has no prototype object");
      }
      const name = cls.name;
      if (name === "" || name === ACTOR_CLASS_NAME) {
        throw new HostError(
          ErrorCode.InvalidArgument,
          `snapshot: registered class needs a usable name, got ${JSON.stringify(name)}`,
        );
      }
      const known = this.protoByName.get(name);
      if (known !== undefined && known !== proto) {
        throw new HostError(ErrorCode.InvalidArgument, `snapshot: two registered classes are named ${name}`);
      }
      this.protoByName.set(name, proto);
      this.nameByProto.set(proto, name);
    }
    if (actorProto !== null && actorProto !== Object.prototype) {
      this.protoByName.set(ACTOR_CLASS_NAME, actorProto);
      this.nameByProto.set(actorProto, ACTOR_CLASS_NAME);
    }
  }

  nameOf(proto: object): string | undefined {
    return this.nameByProto.get(proto);
  }

  protoOf(name: string): object | undefined {
    return this.protoByName.get(name);
  }
}
