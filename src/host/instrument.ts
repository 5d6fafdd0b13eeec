// Metric decorators for the host's journal, snapshot store and model provider. Invariants: a decorated
// object behaves exactly like the one it wraps — same results, same errors, same `this` for every
// method it does not time — and only durable writes, blob transfers and live model calls are timed.
import type { Journal } from "../journal/types.js";
import type { ModelProvider } from "../model/types.js";
import type { SnapshotStore } from "../snapshot/store.js";
import type { HostMetrics } from "../obs/metrics.js";
import type { ToolExecutor } from "../controller/tools.js";
import type { Span } from "@opentelemetry/api";
import { traced } from "../obs/trace.js";
import { meteredJournal } from "./metered-journal.js";

/** The journal with its commits timed and counted (records, bytes, fence conflicts) by backend. */
export function instrumentJournal(journal: Journal, metrics: HostMetrics): Journal {
  return meteredJournal(journal, metrics);
}

/** The snapshot store with the blob bytes written and read counted (a blob handed over as a file counts as read). */
export function instrumentSnapshots(store: SnapshotStore, metrics: HostMetrics): SnapshotStore {
  const localFile = store.localFile?.bind(store);
  const stageFile = store.stageFile?.bind(store);
  return decorate(store, {
    ...(stageFile !== undefined
      ? {
          stageFile: async () => {
            const staged = await stageFile();
            return {
              ...staged,
              commit: async (sha256: string, size: number) => {
                const digest = await staged.commit(sha256, size);
                metrics.snapshot("written", size);
                return digest;
              },
            };
          },
        }
      : {}),
    ...(localFile !== undefined
      ? {
          localFile: (digest: string) => {
            const file = localFile(digest);
            if (file !== undefined) metrics.snapshot("read", file.size);
            return file;
          },
        }
      : {}),
    put: async (bytes, opts) => {
      const digest = await store.put(bytes, opts);
      metrics.snapshot("written", bytes.byteLength);
      return digest;
    },
    get: async (digest) => {
      const bytes = await store.get(digest);
      metrics.snapshot("read", bytes.byteLength);
      return bytes;
    },
  });
}

/** The model provider with each live call counted and timed, and its reported tokens added, by model. */
export function instrumentModel(model: ModelProvider, metrics: HostMetrics): ModelProvider {
  return decorate(model, {
    invoke: (request, opts) =>
      traced(
        "harnesshost.model.call",
        () => ({ "gen_ai.request.model": request.model }),
        (span) => timedInvoke(request, opts, span),
      ),
  });
  async function timedInvoke(
    request: Parameters<ModelProvider["invoke"]>[0],
    opts: Parameters<ModelProvider["invoke"]>[1],
    span: Span | undefined,
  ): ReturnType<ModelProvider["invoke"]> {
    const started = performance.now();
    try {
      const response = await model.invoke(request, opts);
      const u = response.usage;
      metrics.modelCall(
        request.model,
        "ok",
        (performance.now() - started) / 1000,
        u ? Number(u.inputTokens) : 0,
        u ? Number(u.outputTokens) : 0,
      );
      if (span && u)
        span.setAttributes({
          "gen_ai.usage.input_tokens": Number(u.inputTokens),
          "gen_ai.usage.output_tokens": Number(u.outputTokens),
        });
      return response;
    } catch (err) {
      metrics.modelCall(request.model, "error", (performance.now() - started) / 1000, 0, 0);
      throw err;
    }
  }
}

/** The tool executor with each host-executed tool call in a `harnesshost.tool.call` span (tracing on). */
export function instrumentTools(tools: ToolExecutor): ToolExecutor {
  return decorate(tools, {
    execute: (call, ctx) =>
      traced(
        "harnesshost.tool.call",
        () => ({ "harnesshost.tool": call.tool, "harnesshost.tool_call_id": call.id }),
        () => tools.execute(call, ctx),
      ),
  });
}

/**
 * A proxy of `target` whose listed methods are replaced; every other property reads through to the
 * target, methods bound to it (so private state and `instanceof`-free duck typing keep working).
 */
function decorate<T extends object>(target: T, overrides: Partial<T>): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof T];
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      let fn = bound.get(prop);
      if (fn === undefined) {
        fn = (value as (...args: unknown[]) => unknown).bind(t);
        bound.set(prop, fn);
      }
      return fn;
    },
  });
}
