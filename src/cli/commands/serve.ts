// `harnesshost serve`: one host process serving Sessions (+ health, reflection) and the operator
// HarnessRegistry. Invariants: flags are validated (HostConfig, listener policy) before the journal is
// opened; the one `harnesshost listening …` line is printed only once both listeners are bound (the
// ready signal); SIGINT/SIGTERM (or the `npx` that started it exiting) shut down gracefully and exit 0: in-flight calls get drainMs, then are
// cancelled, and the process exits at the latest SHUTDOWN_FORCE_MS later (status 1 if forced). With
// --pid-file the pid file exists exactly while both listeners are bound; --detach returns once they are.
import { readFileSync } from "node:fs";
import { isatty } from "node:tty";
import { join } from "node:path";
import { Host, modelFlagOptions } from "../../host/host.js";
import { modelFromFlag } from "../../model/index.js";
import { packageVersion } from "../version.js";
import { HostConfig, parseHarnessFlag, type HarnessSpecFlag } from "../../host/config.js";
import { type LimitOverrides, parseLimitFlag } from "../../limits/index.js";
import {
  checkListenAddresses,
  type LoadedCredentials,
  loadCredentials,
  startServer,
  type TlsFiles,
} from "../../server/index.js";
import { detach, isDetachedChild, reportReady } from "../background/detach.js";
import { watchNpmExec } from "../background/npx-watch.js";
import { removePidFile, writePidFile } from "../background/pid-file.js";
import { HostMetrics } from "../../obs/metrics.js";
import { startTracing, stopTracing } from "../../obs/trace.js";
import { type MetricsServer, parseHostPort, serveMetrics } from "../../obs/metrics-http.js";
import { loadToolsModule } from "../../host/tool-module.js";
import { loadModelModule, modelModulePath } from "../../host/model-module.js";
import { int, str, UsageError, type Command, type FlagValues } from "../command.js";
import { createLog, defaultLogFormat, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../../obs/log.js";

export const DEFAULT_ADDR = "127.0.0.1:7233";
/** After the drain (limit drainMs), how long shutdown may still take before the process exits anyway. */
export const SHUTDOWN_FORCE_MS = 5_000;
export const DEFAULT_REGISTRY_ADDR = "127.0.0.1:7234";
/**
 * How long after ready serve adds the process_* and nodejs_* metric families (a scrape before then adds
 * them at once): loading them blocks the event loop for tens of ms, which the first requests after
 * ready (a readiness probe, a client's first call) would otherwise wait for.
 */
export const PROCESS_METRICS_AFTER_MS = 2_000;
/** The HTTP listener (Connect + the console, docs/console.md); `--http-addr off` serves none. */
export const DEFAULT_HTTP_ADDR = "127.0.0.1:7235";

function harnessFlags(values: FlagValues): HarnessSpecFlag[] {
  const raw = (values["harness"] as string[] | undefined) ?? [];
  const specs = raw.map((flag) => {
    try {
      return parseHarnessFlag(flag);
    } catch (err) {
      throw new UsageError(`--harness ${JSON.stringify(flag)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  for (const flag of (values["checkpoint-policy"] as string[] | undefined) ?? []) {
    const m = /^([^=]+)=(every-turn|on-suspend)$/.exec(flag);
    if (!m) throw new UsageError(`--checkpoint-policy ${JSON.stringify(flag)}: expected NAME=every-turn|on-suspend`);
    const i = specs.findIndex((s) => s.name === m[1]);
    if (i < 0)
      throw new UsageError(`--checkpoint-policy ${JSON.stringify(flag)}: no --harness named ${JSON.stringify(m[1])}`);
    specs[i] = { ...specs[i]!, checkpointPolicy: m[2] === "on-suspend" ? "on-suspend" : "every-turn" };
  }
  return specs;
}

function limitFlags(values: FlagValues): LimitOverrides {
  const out: Record<string, number> = {};
  for (const flag of (values["limit"] as string[] | undefined) ?? []) {
    try {
      const [name, value] = parseLimitFlag(flag);
      out[name] = value;
    } catch (err) {
      throw new UsageError(`--limit ${JSON.stringify(flag)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return out;
}

function hostConfig(values: FlagValues): HostConfig {
  const journal = str(values, "journal");
  const modelName = str(values, "model-name");
  const auditFile = str(values, "audit-file");
  const project = str(values, "project");
  const modelUrl = str(values, "model-url");
  const modelBaseUrl = str(values, "model-base-url");
  if (modelUrl !== undefined && modelBaseUrl !== undefined)
    throw new UsageError("--model-base-url is the reference's spelling of --model-url; give one of them");
  const url = modelUrl ?? modelBaseUrl;
  const modelPath = str(values, "model-path");
  const modelAuthHeader = str(values, "model-auth-header");
  const parsed = HostConfig.safeParse({
    ...(auditFile !== undefined ? { auditFile } : {}),
    dataDir: str(values, "data") ?? "./.harnesshost",
    ...(journal !== undefined ? { journal } : {}),
    model: str(values, "model") ?? "echo",
    ...(modelName !== undefined ? { modelName } : {}),
    ...(url !== undefined ? { modelUrl: url } : {}),
    ...(modelPath !== undefined ? { modelPath } : {}),
    ...(modelAuthHeader !== undefined ? { modelAuthHeader } : {}),
    ...(project !== undefined ? { defaultProject: project } : {}),
    harnesses: harnessFlags(values),
    nodeIdleMs: int(values, "node-idle-ms", 2000),
    limits: limitFlags(values),
    toolsWithoutApproval: (values["tool-without-approval"] as string[] | undefined) ?? [],
  });
  if (!parsed.success)
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  try {
    // Refuse bad model flags before anything opens (a model module is loaded, and checked, by run).
    if (modelModulePath(parsed.data.model) === undefined)
      modelFromFlag(parsed.data.model, modelFlagOptions(parsed.data));
    else if (Object.keys(modelFlagOptions(parsed.data)).length > 0)
      throw new Error(
        "--model-name, --model-url, --model-path and --model-auth-header go with an endpoint, not --model module:FILE",
      );
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  return parsed.data;
}

/** The --token-file path and what it says, read once (principals, digests, the JWT line). */
function tokenFile(values: FlagValues): { path: string; loaded: LoadedCredentials } | undefined {
  const file = str(values, "token-file");
  if (file === undefined) return undefined;
  try {
    return { path: file, loaded: loadCredentials(file) };
  } catch (err) {
    throw new UsageError(`--token-file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function tls(values: FlagValues): TlsFiles | undefined {
  const cert = str(values, "tls-cert");
  const key = str(values, "tls-key");
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new UsageError("--tls-cert and --tls-key go together");
  return { cert: readFileSync(cert), key: readFileSync(key) };
}

function logLevel(values: FlagValues): LogLevel {
  const level = str(values, "log-level") ?? "info";
  const known = LOG_LEVELS.find((l) => l === level);
  if (!known) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  return known;
}

function logFormat(values: FlagValues): LogFormat {
  const format = str(values, "log-format");
  if (format === undefined) return defaultLogFormat(2, (fd) => isatty(fd));
  const known = LOG_FORMATS.find((f) => f === format);
  if (!known) throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(", ")}`);
  return known;
}

/** The journal location for the listening line, without any password a URL may carry. */
export function redactedJournal(config: HostConfig): string {
  const where = config.journal ?? join(config.dataDir, "journal.db");
  try {
    const url = new URL(where);
    if (url.password !== "") url.password = "***";
    return url.protocol.length > 2 ? url.toString() : where;
  } catch {
    return where;
  }
}

/** What stops the host: SIGINT/SIGTERM, or the `npx` that started it exiting (see npx-watch.ts). */
function stopSignal(): Promise<NodeJS.Signals | "npx-exited"> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals | "npx-exited"): void => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      unwatch();
      resolve(sig);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
    const unwatch = watchNpmExec(() => on("npx-exited"));
  });
}

export const serveCommand: Command = {
  name: "serve",
  usage:
    "serve [--data DIR] [--journal URL] [--addr 127.0.0.1:7233] [--registry-addr 127.0.0.1:7234|off] [--http-addr 127.0.0.1:7235|off] [--harness name=<local|spawned|remote|vm>:<target>|name=ADDRESS]… [--checkpoint-policy name=every-turn|on-suspend]… [--project P] [--model echo|URL|ID] [--model-name M] [--model-url URL] [--model-path PATH[?QUERY]] [--model-auth-header H] [--node-idle-ms N] [--audit-file F.jsonl] [--gc-interval-ms N] [--token-file F] [--tls-cert F --tls-key F] [--limit NAME=VALUE]… [--tool-without-approval TOOL]… [--tools MODULE] [--log-level info] [--log-format json|pretty] [--log-payloads] [--metrics-addr 127.0.0.1:9464] [--pid-file F] [--detach [--log-file F]] [--version]",
  options: {
    data: { type: "string" },
    journal: { type: "string" },
    addr: { type: "string" },
    "registry-addr": { type: "string" },
    "http-addr": { type: "string" },
    harness: { type: "string", multiple: true },
    "checkpoint-policy": { type: "string", multiple: true },
    project: { type: "string" },
    model: { type: "string" },
    "model-name": { type: "string" },
    "model-url": { type: "string" },
    "model-base-url": { type: "string" },
    "model-path": { type: "string" },
    "model-auth-header": { type: "string" },
    version: { type: "boolean" },
    "node-idle-ms": { type: "string" },
    "audit-file": { type: "string" },
    "gc-interval-ms": { type: "string" },
    "token-file": { type: "string" },
    "tls-cert": { type: "string" },
    "tls-key": { type: "string" },
    "log-level": { type: "string" },
    "log-format": { type: "string" },
    "log-payloads": { type: "boolean" },
    "metrics-addr": { type: "string" },
    limit: { type: "string", multiple: true },
    "tool-without-approval": { type: "string", multiple: true },
    tools: { type: "string" },
    "pid-file": { type: "string" },
    detach: { type: "boolean" },
    "log-file": { type: "string" },
  },
  async run(ctx) {
    if (ctx.values["version"] === true) {
      ctx.out(packageVersion());
      return 0;
    }
    const config = hostConfig(ctx.values);
    const pidFile = str(ctx.values, "pid-file");
    const logFile = str(ctx.values, "log-file");
    if (logFile !== undefined && ctx.values["detach"] !== true && !isDetachedChild())
      throw new UsageError("--log-file goes with --detach (in the foreground the log is stderr)");
    const addr = str(ctx.values, "addr") ?? DEFAULT_ADDR;
    const registryAddr = str(ctx.values, "registry-addr") ?? DEFAULT_REGISTRY_ADDR;
    const httpAddr = str(ctx.values, "http-addr") ?? DEFAULT_HTTP_ADDR;
    const tokens = tokenFile(ctx.values);
    const tlsFiles = tls(ctx.values);
    const level = logLevel(ctx.values);
    const format = logFormat(ctx.values);
    const metricsAddr = str(ctx.values, "metrics-addr");
    if (metricsAddr !== undefined) {
      try {
        parseHostPort(metricsAddr);
      } catch (err) {
        throw new UsageError(`--metrics-addr: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    try {
      checkListenAddresses(addr, registryAddr, tlsFiles !== undefined && tokens !== undefined, httpAddr);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err), false);
    }
    // Your own tools (docs/harness-authoring.md): loaded and checked before anything is opened or served.
    const toolsModule = str(ctx.values, "tools");
    const hostTools = toolsModule !== undefined ? await loadToolsModule(toolsModule) : undefined;
    const modelModule = modelModulePath(config.model);
    const model = modelModule !== undefined ? await loadModelModule(modelModule) : undefined;
    if (ctx.values["detach"] === true)
      return detach("serve", ctx.argv, logFile ?? join(config.dataDir, "serve.log"), ctx);
    const logger = createLog({ level, format });
    // Traces: on only when the OTEL_* environment asks (docs/operations.md, "Traces").
    await startTracing(process.env);
    const metrics = new HostMetrics();
    const host = await Host.open(config, {
      logger,
      metrics,
      logPayloads: ctx.values["log-payloads"] === true,
      ...(hostTools ? { hostTools } : {}),
      ...(model ? { model } : {}),
    });
    // The vm runtime's accelerator is decided once per process; say which and why at start-up.
    if (config.harnesses?.some((h) => h.runtime === "vm")) {
      const accel = (await import("../../vm/accel.js")).chooseAccel();
      logger.info({ accelerator: accel.accel, reason: accel.reason }, "vm runtime accelerator");
    }
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer(host, {
        addr,
        registryAddr,
        httpAddr,
        ...(tokens !== undefined ? { tokenFile: tokens.path, tokenFileLoaded: tokens.loaded } : {}),
        ...(tlsFiles ? { tls: tlsFiles } : {}),
        logger,
      });
    } catch (err) {
      await host.close();
      throw err;
    }
    let scrape: MetricsServer | undefined;
    if (metricsAddr !== undefined) {
      try {
        scrape = await serveMetrics(metricsAddr, metrics);
      } catch (err) {
        await server.close(0);
        await host.close();
        throw new UsageError(
          `--metrics-addr ${metricsAddr}: ${err instanceof Error ? err.message : String(err)}`,
          false,
        );
      }
    }
    // Snapshot GC (docs/protocol.md §9.7): every 10 minutes by default; 0 turns it off (run `harnesshost gc` instead).
    const gcEvery = int(ctx.values, "gc-interval-ms", 10 * 60_000);
    const gc =
      gcEvery > 0
        ? host.scheduleSnapshotGarbage({
            intervalMs: gcEvery,
            onRun: (r) =>
              (r.deleted.length > 0 || r.strays.length > 0) &&
              logger.info(
                { deleted: r.deleted.length, strays: r.strays.length, referenced: r.referenced },
                "snapshot gc",
              ),
            onError: (err) =>
              logger.warn({ err: err instanceof Error ? err.message : String(err) }, "snapshot gc failed"),
          })
        : undefined;
    const stopped = stopSignal();
    const listening = `harnesshost listening addr=${server.addr} registry=${server.registryAddr} journal=${redactedJournal(config)} harnesses=${host.registry.names().join(",")}${server.httpUrl ? ` console=${server.httpUrl}` : ""}${scrape ? ` metrics=${scrape.addr}` : ""}`;
    if (pidFile !== undefined) writePidFile(pidFile);
    ctx.err(listening);
    reportReady(listening);
    // The process_* and nodejs_* families load ~80 module files: added PROCESS_METRICS_AFTER_MS after
    // ready (or at the first scrape), not while the first requests after ready are being answered.
    metrics.collectProcessMetricsSoon(PROCESS_METRICS_AFTER_MS);
    const sig = await stopped;
    const drainMs = host.limits.drainMs;
    logger.info({ signal: sig, drainMs }, "shutting down");
    // The bound on shutdown: whatever still holds the process SHUTDOWN_FORCE_MS after the drain (a call
    // that ignores cancellation, a handle left open) is abandoned. Unref'd: it never keeps us alive.
    const force = setTimeout(() => {
      logger.error({ drainMs, forceMs: SHUTDOWN_FORCE_MS }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, drainMs + SHUTDOWN_FORCE_MS);
    force.unref();
    gc?.stop();
    await scrape?.close();
    await server.close(drainMs);
    await host.close();
    if (pidFile !== undefined) removePidFile(pidFile);
    await stopTracing();
    logger.info({}, "stopped");
    return 0;
  },
};
