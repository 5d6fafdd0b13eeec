// The built-in effects (docs/protocol.md §13.3): a structured audit log (JSON lines file), a webhook (HTTP POST,
// transient failures retried with backoff, refusals not), and metrics counters. Invariants: each is
// best-effort I/O after a commit — its failure is the dispatcher's to log and count; an audit line and
// a webhook body carry only what the emitter put in the payload, never message contents by default.
import { appendFile } from "node:fs/promises";
import { z } from "zod";
import { withRetry } from "../model/retry.js";
import { isTransientHttpStatus, ModelRequestError, ModelUnavailableError, type RetryPolicy } from "../model/types.js";
import { defineEffect } from "./define.js";
import type { EffectDispatcher, EffectSnapshot } from "./dispatcher.js";

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** One audit line: what happened, to which session; detail is a flat map of scalars. */
export const auditRecord = defineEffect(
  "audit.record",
  z.object({ event: z.string().min(1), detail: z.record(z.string(), Scalar).default({}) }).strict(),
);

/** An HTTP POST of a JSON body to an http(s) URL. */
export const webhookPost = defineEffect(
  "webhook.post",
  z
    .object({
      url: z
        .string()
        .url()
        .refine((u) => /^https?:\/\//.test(u), "webhook URL must be http or https"),
      body: z.json(),
    })
    .strict(),
);

/** Adds `by` (default 1) to the counter `name`. */
export const metricsCount = defineEffect(
  "metrics.count",
  z.object({ name: z.string().min(1), by: z.number().int().min(1).default(1) }).strict(),
);

/** The metrics the `metrics.count` handler keeps. */
export class MetricsCounters {
  private readonly values = new Map<string, number>();
  add(name: string, by: number): void {
    this.values.set(name, (this.values.get(name) ?? 0) + by);
  }
  get(name: string): number {
    return this.values.get(name) ?? 0;
  }
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.values);
  }
}

export function auditHandler(file: string) {
  return async (payload: z.output<typeof auditRecord.schema>, snap: EffectSnapshot): Promise<void> => {
    const line = {
      ts: new Date().toISOString(),
      session: snap.session,
      seq: snap.committedSeq,
      last_seq: snap.lastSeq,
      event: payload.event,
      detail: payload.detail,
    };
    await appendFile(file, `${JSON.stringify(line)}\n`, "utf8");
  };
}

/** Webhook retries: bounded, exponential backoff; only transient statuses and network errors. */
export const WEBHOOK_RETRY: RetryPolicy = { maxAttempts: 4, initialBackoffMs: 50, maxBackoffMs: 1000, multiplier: 2 };

export function webhookHandler(policy: RetryPolicy = WEBHOOK_RETRY) {
  return async (
    payload: z.output<typeof webhookPost.schema>,
    snap: EffectSnapshot,
    signal: AbortSignal,
  ): Promise<void> => {
    await withRetry(
      async () => {
        const res = await fetch(payload.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-harnesshost-session": snap.session,
            "x-harnesshost-seq": String(snap.committedSeq),
          },
          body: JSON.stringify(payload.body),
          signal,
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return;
        if (isTransientHttpStatus(res.status))
          throw new ModelUnavailableError(`webhook answered HTTP ${res.status}`, { status: res.status });
        throw new ModelRequestError(`webhook refused with HTTP ${res.status}`, { status: res.status });
      },
      policy,
      signal,
    );
  };
}

export interface BuiltinEffectOptions {
  /** JSON-lines file for `audit.record`; without it the audit handler is not registered. */
  readonly auditFile?: string;
  readonly metrics?: MetricsCounters;
  readonly webhookRetry?: RetryPolicy;
}

/** Registers the built-in handlers; returns the metrics counters `metrics.count` feeds. */
export function registerBuiltinEffects(dispatcher: EffectDispatcher, opts: BuiltinEffectOptions = {}): MetricsCounters {
  const metrics = opts.metrics ?? new MetricsCounters();
  if (opts.auditFile !== undefined) dispatcher.register(auditRecord, auditHandler(opts.auditFile));
  dispatcher.register(webhookPost, webhookHandler(opts.webhookRetry));
  dispatcher.register(metricsCount, (p) => metrics.add(p.name, p.by));
  return metrics;
}
