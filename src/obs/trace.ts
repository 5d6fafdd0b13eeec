// Traces (docs/operations.md, "Traces"). Invariants: tracing is off unless the standard OTEL_*
// environment asks for it (or a test installs an exporter); while it is off neither the SDK nor the
// OpenTelemetry API is loaded (the API is imported when tracing starts), no span or context object is created and `traced` calls its function directly — the only cost is a
// boolean check; while it is on, every span is ended exactly once, an exception marks it ERROR, and
// the W3C trace context crosses processes in `traceparent`/`tracestate` carriers.
import type { Attributes, Context, SpanKind as OtelSpanKind, Span } from "@opentelemetry/api";

type Api = typeof import("@opentelemetry/api");

/** OpenTelemetry's span kinds (the API's numeric enum), without loading the API while tracing is off. */
export const SpanKind = {
  INTERNAL: 0,
  SERVER: 1,
  CLIENT: 2,
  PRODUCER: 3,
  CONSUMER: 4,
} as const satisfies Record<string, OtelSpanKind>;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** SpanStatusCode.ERROR of the API. */
const STATUS_ERROR = 2;

const TRACER = "harnesshost";
let on = false;
/** The OpenTelemetry API, once startTracing loaded it (set whenever `on` is). */
let api: Api | undefined;
let shutdownHook: (() => Promise<void>) | undefined;
let flushHook: (() => Promise<void>) | undefined;

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return on;
}

/** The exporter choice the OTEL_* environment makes; undefined: tracing stays off. */
export function tracesExporterFromEnv(env: NodeJS.ProcessEnv): "otlp" | "console" | undefined {
  if (env["OTEL_SDK_DISABLED"]?.toLowerCase() === "true") return undefined;
  const named = env["OTEL_TRACES_EXPORTER"]?.split(",")[0]?.trim().toLowerCase();
  if (named === "none") return undefined;
  if (named === "otlp" || named === "console") return named;
  if (named !== undefined && named !== "")
    throw new Error(`OTEL_TRACES_EXPORTER=${named}: supported: otlp, console, none`);
  const endpoint = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] || env["OTEL_EXPORTER_OTLP_ENDPOINT"];
  return endpoint ? "otlp" : undefined;
}

/** A span exporter as the SDK takes it (kept structural so this module loads no SDK type). */
export type SpanExporterLike = object;

export interface TracingOptions {
  /** Export to this exporter, one span at a time as it ends (tests: an in-memory exporter). */
  readonly exporter?: SpanExporterLike;
  /** service.name when OTEL_SERVICE_NAME does not set one. */
  readonly serviceName?: string;
  /**
   * With `exporter`: hand it spans in batches, through the batching processor the OTLP path uses (what
   * a serving host pays per span; read the exporter after flushTracing), instead of one span at a time
   * as each ends (default; tests read the exporter right away).
   */
  readonly batch?: boolean;
}

/**
 * Starts the OpenTelemetry SDK when the environment (or `opts.exporter`) asks for it: a Node tracer
 * provider registered globally (async-local context, W3C propagator), exporting through OTLP/HTTP (its
 * endpoint, headers and timeouts from OTEL_EXPORTER_OTLP_*; batching from OTEL_BSP_*; sampling from
 * OTEL_TRACES_SAMPLER). Returns whether tracing is on.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env, opts: TracingOptions = {}): Promise<boolean> {
  if (on) return true;
  const kind = opts.exporter ? "given" : tracesExporterFromEnv(env);
  if (kind === undefined) return false;
  const [
    { NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter },
    { resourceFromAttributes },
    otel,
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/api"),
  ]);
  api = otel;
  type Exporter = ConstructorParameters<typeof SimpleSpanProcessor>[0];
  let processor: InstanceType<typeof SimpleSpanProcessor> | InstanceType<typeof BatchSpanProcessor>;
  if (kind === "given")
    processor = opts.batch
      ? new BatchSpanProcessor(opts.exporter as Exporter)
      : new SimpleSpanProcessor(opts.exporter as Exporter);
  else if (kind === "console") processor = new BatchSpanProcessor(new ConsoleSpanExporter());
  else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  }
  const serviceName = env["OTEL_SERVICE_NAME"] ?? opts.serviceName ?? TRACER;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  shutdownHook = () => provider.shutdown();
  flushHook = () => provider.forceFlush();
  on = true;
  return true;
}

/**
 * Stops (true) or restarts (false) recording spans while the SDK stays registered — for the bench,
 * which alternates traced and untraced turns in one process. No effect before startTracing.
 */
export function pauseTracing(paused: boolean): void {
  if (shutdownHook) on = !paused;
}

/** Exports every span ended so far (a batching processor holds them until then); no-op while off. */
export async function flushTracing(): Promise<void> {
  await flushHook?.();
}

/** Flushes and stops the SDK (exports what is buffered); tracing is off afterwards. */
export async function stopTracing(): Promise<void> {
  const hook = shutdownHook;
  shutdownHook = undefined;
  flushHook = undefined;
  on = false;
  if (hook) await hook();
  api?.trace.disable();
  api?.context.disable();
  api?.propagation.disable();
}

/**
 * Runs `fn` in a span named `name` (a child of `parent`, else of the active span) when tracing is on;
 * otherwise runs `fn(undefined)` with nothing allocated. `attributes` is only called when on.
 */
export function traced<T>(
  name: string,
  attributes: (() => Attributes) | undefined,
  fn: (span: Span | undefined) => Promise<T>,
  parent?: Context,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!on || api === undefined) return fn(undefined);
  const tracer = api.trace.getTracer(TRACER);
  const opts = { kind: kind as OtelSpanKind, ...(attributes ? { attributes: attributes() } : {}) };
  const run = (span: Span): Promise<T> =>
    fn(span).then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        span.setStatus({ code: STATUS_ERROR, message: errorName(err) });
        span.end();
        throw err;
      },
    );
  return parent ? tracer.startActiveSpan(name, opts, parent, run) : tracer.startActiveSpan(name, opts, run);
}

/**
 * A span that already happened (start and end in performance.now() milliseconds) as a child of the
 * active span — recorded only while tracing is on AND the active span is recording (sampled), so an
 * operation outside any trace (or in an unsampled one) creates no span and starts no root trace; the
 * cost when nothing records is a flag check (off) or one context read (on). `attributes` is only
 * called when the span is recorded; `err` marks it ERROR with the error's code or class.
 */
export function recordChildSpan(
  name: string,
  startPerfMs: number,
  endPerfMs: number,
  attributes: () => Attributes,
  err?: unknown,
): void {
  if (!on || api === undefined) return;
  const active = api.context.active();
  if (!api.trace.getSpan(active)?.isRecording()) return;
  const span = api.trace
    .getTracer(TRACER)
    .startSpan(name, { startTime: startPerfMs, attributes: attributes() }, active);
  if (err !== undefined) span.setStatus({ code: STATUS_ERROR, message: errorName(err) });
  span.end(endPerfMs);
}

/** A span that already happened (start time in ms since the epoch), ended now: e.g. an approval wait. */
export function recordSpan(name: string, startMs: number, attributes: Attributes): void {
  if (!on || api === undefined) return;
  api.trace.getTracer(TRACER).startSpan(name, { startTime: startMs, attributes }).end();
}

/** The error's class or code for a span status — never its message, which may quote user data. */
function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return err instanceof Error ? err.name : "error";
}

/** The active trace context as W3C carrier headers (empty when tracing is off or no span is active). */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (on && api !== undefined) api.propagation.inject(api.context.active(), carrier);
  return carrier;
}

/** The context a W3C carrier (`traceparent`, `tracestate`) names; undefined when tracing is off. */
export function contextFromHeaders(get: (key: string) => string | undefined): Context | undefined {
  if (!on || api === undefined) return undefined;
  return api.propagation.extract(api.context.active(), undefined, {
    get: (_carrier, key) => get(key),
    keys: () => ["traceparent", "tracestate"],
  });
}

/** Adds attributes to the active span (only while tracing is on; `attributes` is not called otherwise). */
export function annotateSpan(attributes: () => Attributes): void {
  if (!on || api === undefined) return;
  api.trace.getActiveSpan()?.setAttributes(attributes());
}
