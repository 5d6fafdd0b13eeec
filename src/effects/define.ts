// Typed effect definitions (docs/protocol.md §13.1): a key "<plugin>.<name>" bound to a zod schema. Invariant: an
// effect value exists only if its payload passed the schema at emit time, so a bad payload fails
// where it is produced — never later in a handler.
import type { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EmittedEffect } from "../harness/types.js";

const KEY = /^[a-z][a-z0-9-]*\.[a-z][a-zA-Z0-9_-]*$/;

export interface Effect<T> extends EmittedEffect {
  readonly payload: T;
}

/** A typed effect constructor; `definition.key` and `definition.schema` are kept for the dispatcher. */
export interface EffectDefinition<T> {
  (payload: T): Effect<T>;
  readonly key: string;
  readonly schema: z.ZodType<T>;
  /** Validates an untyped emission (e.g. from `sink.emit`) against the schema. */
  parse(payload: unknown): T;
}

export function defineEffect<S extends z.ZodType>(key: string, schema: S): EffectDefinition<z.output<S>> {
  if (!KEY.test(key))
    throw new HostError(ErrorCode.InvalidArgument, `effect key ${JSON.stringify(key)} is not "<plugin>.<name>"`);
  const parse = (payload: unknown): z.output<S> => {
    const res = schema.safeParse(payload);
    if (!res.success)
      throw new HostError(ErrorCode.InvalidArgument, `effect ${key}: invalid payload: ${res.error.message}`);
    return res.data as z.output<S>;
  };
  const ctor = (payload: z.output<S>): Effect<z.output<S>> => ({ key, payload: parse(payload) });
  return Object.assign(ctor, { key, schema: schema as unknown as z.ZodType<z.output<S>>, parse });
}
