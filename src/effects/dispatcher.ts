// The effect dispatcher: each effect key's handler, and their dispatch after a commit (docs/protocol.md §13.2).
// Invariants: handlers run only after the commit that carried their effects, one at a time in
// emission order, each under its own timeout, outside any session lock; a failing or slow handler is
// logged by key (never its payload) and counted, never rolls anything back and never stops the next.
import { ErrorCode, HostError } from "../errors/index.js";
import type { EmittedEffect } from "../harness/types.js";
import type { EffectDefinition } from "./define.js";

/** The post-commit state a handler sees. */
export interface EffectSnapshot {
  readonly session: string;
  /** Seq and hash of the session's head after the commit. */
  readonly lastSeq: number;
  readonly lastHash: string;
  /** The seq of the record whose commit carried the effect. */
  readonly committedSeq: number;
}

export type EffectHandler<T> = (payload: T, snapshot: EffectSnapshot, signal: AbortSignal) => Promise<void> | void;

export interface EffectLogger {
  warn(fields: object, message?: string): void;
}

/** An effect whose commit succeeded, waiting for dispatch. */
export interface CommittedEffect {
  readonly effect: EmittedEffect;
  readonly session: string;
  readonly seq: number;
}

export interface DispatchReport {
  readonly attempted: number;
  readonly dispatched: number;
  readonly failed: number;
}

export interface EffectCounters {
  readonly dispatched: Readonly<Record<string, number>>;
  readonly failed: Readonly<Record<string, number>>;
}

interface Registered {
  readonly parse: (payload: unknown) => unknown;
  readonly handler: EffectHandler<unknown>;
  readonly timeoutMs: number;
}

export const DEFAULT_EFFECT_TIMEOUT_MS = 10_000;

class Counts {
  readonly dispatched = new Map<string, number>();
  readonly failed = new Map<string, number>();
  view(): EffectCounters {
    return { dispatched: Object.fromEntries(this.dispatched), failed: Object.fromEntries(this.failed) };
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

export class EffectDispatcher {
  private readonly handlers = new Map<string, Registered>();
  private readonly total = new Counts();
  private readonly perSession = new Map<string, Counts>();

  constructor(private readonly logger?: EffectLogger) {}

  register<T>(definition: EffectDefinition<T>, handler: EffectHandler<T>, opts: { timeoutMs?: number } = {}): void {
    if (this.handlers.has(definition.key))
      throw new HostError(ErrorCode.AlreadyExists, `effect ${definition.key} already has a handler`);
    this.handlers.set(definition.key, {
      parse: definition.parse,
      handler: handler as EffectHandler<unknown>,
      timeoutMs: opts.timeoutMs ?? DEFAULT_EFFECT_TIMEOUT_MS,
    });
  }

  has(key: string): boolean {
    return this.handlers.has(key);
  }

  /** Emit-time validation of an untyped emission against the registered schema (INVALID_ARGUMENT). */
  validate(effect: EmittedEffect): EmittedEffect {
    const reg = this.handlers.get(effect.key);
    if (!reg) return effect;
    return { key: effect.key, payload: reg.parse(effect.payload) };
  }

  /** Refuses (FAILED_PRECONDITION) when any key has no handler: the commit must not happen. */
  requireHandlers(effects: readonly EmittedEffect[]): void {
    const missing = [...new Set(effects.map((e) => e.key).filter((k) => !this.handlers.has(k)))];
    if (missing.length > 0) {
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `effect key${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ha${missing.length > 1 ? "ve" : "s"} no registered handler; the commit was refused`,
      );
    }
  }

  /** Runs each handler in order against `snapshot`; failures are logged and counted. */
  async dispatch(
    effects: readonly CommittedEffect[],
    snapshot: (c: CommittedEffect) => EffectSnapshot,
  ): Promise<DispatchReport> {
    let dispatched = 0;
    let failed = 0;
    for (const c of effects) {
      const key = c.effect.key;
      const counts = this.countsOf(c.session);
      try {
        const reg = this.handlers.get(key);
        if (!reg) throw new HostError(ErrorCode.FailedPrecondition, `effect ${key} lost its handler`);
        await runWithTimeout(reg.timeoutMs, (signal) => reg.handler(c.effect.payload, snapshot(c), signal));
        dispatched++;
        bump(this.total.dispatched, key);
        bump(counts.dispatched, key);
      } catch (err) {
        failed++;
        bump(this.total.failed, key);
        bump(counts.failed, key);
        this.logger?.warn(
          { effect: key, session: c.session, seq: c.seq, err: err instanceof Error ? err.message : String(err) },
          "effect handler failed",
        );
      }
    }
    return { attempted: effects.length, dispatched, failed };
  }

  /** Counters since this dispatcher was created: for every session, or for one. */
  counters(session?: string): EffectCounters {
    if (session === undefined) return this.total.view();
    return this.perSession.get(session)?.view() ?? { dispatched: {}, failed: {} };
  }

  private countsOf(session: string): Counts {
    let c = this.perSession.get(session);
    if (!c) {
      c = new Counts();
      this.perSession.set(session, c);
    }
    return c;
  }
}

async function runWithTimeout(ms: number, fn: (signal: AbortSignal) => Promise<void> | void): Promise<void> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new HostError(ErrorCode.DeadlineExceeded, `effect handler timed out after ${ms} ms`);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    await Promise.race([Promise.resolve().then(() => fn(controller.signal)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
