// The logger an operation carries (docs/operations.md, "Log fields"), with no logging library behind
// it, so every layer — the controller included — can take one. Invariants: an operation's logger is
// made where the operation starts and handed down explicitly (never a module global); its bound ids
// (request_id, session, harness, turn) are clipped to logFieldChars; while its levels are off it
// costs one small object — no child logger, no bindings, no string is built.

/** The logging surface host components take (a pino logger fits; child() adds bound fields). */
export interface Log {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
  child(bindings: Record<string, unknown>): Log;
  isLevelEnabled(level: string): boolean;
}

/** A logger that writes nothing and builds nothing (code called without an operation's logger). */
export const NO_LOG: Log = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => NO_LOG,
  isLevelEnabled: () => false,
};

/** An id as logged: whole up to `max` characters, else its head and its full length (limit logFieldChars). */
export function clipForLog(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…(${value.length} chars)`;
}

/** What scopes an operation's logger: every line it writes carries these (ids clipped to logFieldChars). */
export interface OpScope {
  /** The call's x-request-id (field request_id). */
  readonly requestId?: string | undefined;
  /** The session uid (field session). */
  readonly session?: string | undefined;
  /** The harness's registry name (field harness). */
  readonly harness?: string | undefined;
  /** The turn's execution id (field turn). */
  readonly executionId?: string | undefined;
  /** The authenticated principal who asked for the operation (field actor). */
  readonly actor?: string | undefined;
}

/** The bound fields of a scope, named as on the log line, each id clipped to `max` characters. */
export function scopeFields(scope: OpScope, max: number): Record<string, string> {
  const fields: Record<string, string> = {};
  if (scope.requestId !== undefined && scope.requestId !== "") fields["request_id"] = clipForLog(scope.requestId, max);
  if (scope.session !== undefined && scope.session !== "") fields["session"] = clipForLog(scope.session, max);
  if (scope.harness !== undefined && scope.harness !== "") fields["harness"] = clipForLog(scope.harness, max);
  if (scope.executionId !== undefined && scope.executionId !== "") fields["turn"] = clipForLog(scope.executionId, max);
  if (scope.actor !== undefined && scope.actor !== "") fields["actor"] = clipForLog(scope.actor, max);
  return fields;
}

/**
 * A child logger made only when a line is written: an operation's logger costs one small object while
 * its level is off (pino serialises a child's bindings when the child is made), and the bindings
 * (`bind`, a thunk) are not even computed until then.
 */
class LazyChild implements Log {
  #made: Log | undefined;
  constructor(
    private readonly parent: Log,
    private readonly bind: () => Record<string, unknown>,
  ) {}

  #log(): Log {
    const parent = this.parent instanceof LazyChild ? this.parent.#log() : this.parent;
    this.#made ??= parent.child(this.bind());
    return this.#made;
  }

  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }
  debug(fields: object, message?: string): void {
    if (this.parent.isLevelEnabled("debug")) this.#log().debug(fields, message);
  }
  info(fields: object, message?: string): void {
    if (this.parent.isLevelEnabled("info")) this.#log().info(fields, message);
  }
  warn(fields: object, message?: string): void {
    if (this.parent.isLevelEnabled("warn")) this.#log().warn(fields, message);
  }
  error(fields: object, message?: string): void {
    if (this.parent.isLevelEnabled("error")) this.#log().error(fields, message);
  }
  child(bindings: Record<string, unknown>): Log {
    return new LazyChild(this, () => bindings);
  }
}

/** `parent` with fields bound lazily (see LazyChild): for per-operation loggers on hot paths. */
export function lazyChild(parent: Log, bind: () => Record<string, unknown>): Log {
  return new LazyChild(parent, bind);
}

/**
 * The logger of one operation: `parent` with the scope's request_id, session, harness and turn bound
 * (ids clipped to `max`, limit logFieldChars), made lazily so it is free while its levels are off.
 */
export function opLogger(parent: Log, scope: OpScope, max: number): Log {
  return new LazyChild(parent, () => scopeFields(scope, max));
}
