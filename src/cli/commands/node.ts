// `harnesshost node`: serve one harness as a gRPC harness node (Harness + Actors services). Invariant:
// the node announces its address on stdout only once it is listening, and exits cleanly (actors
// dropped, socket removed) on SIGINT/SIGTERM — or when its parent closes stdin, with --parent-stdin.
// With --pid-file the pid file exists exactly while it listens; --detach returns once it listens. Each
// setting comes from its flag, else from the reference's HARNESS_* variable (nodeSettings); with
// --ready-addr the /readyz probe answers only once the gRPC server accepts.
import { loadHarnessFactory, moduleDigest } from "../../host/runtimes.js";
import { serveHarness } from "../../node/serve.js";
import { detach, isDetachedChild, reportReady } from "../background/detach.js";
import { watchNpmExec } from "../background/npx-watch.js";
import { removePidFile, writePidFile } from "../background/pid-file.js";
import { createLog, defaultLogFormat, LOG_FORMATS, LOG_LEVELS } from "../../obs/log.js";
import { startTracing, stopTracing } from "../../obs/trace.js";
import { isatty } from "node:tty";
import { type FlagValues, str, UsageError, type Command } from "../command.js";
import { ChatAgent } from "../../../harnesses/index.js";
import { serveReadyProbe, type ReadyProbe } from "../../node/readyz.js";
import type { HarnessFactory } from "../../harness/types.js";

/** Where a detached node logs unless --log-file says otherwise. */
export const DEFAULT_NODE_LOG = "./.harnesshost/node.log";

/** Where a node listens, and its probe, when HARNESS_KIND is set and nothing else says: the reference pod's ports. */
export const POD_LISTEN = ":80";
export const POD_READY_ADDR = ":8081";

export interface NodeSettings {
  readonly harness: string;
  /** The gRPC address; the Go form `:PORT` (every interface) is spelled `0.0.0.0:PORT`. */
  readonly listen: string;
  /** The /readyz probe's address; undefined: no probe. */
  readonly readyAddr?: string;
  /** The chat harness's model id. */
  readonly model?: string;
}

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === "" ? undefined : v;
}

/**
 * A node's settings: each flag, else the reference harnessnode's variable — `--harness` HARNESS_KIND,
 * `--listen` HARNESS_ADDR, `--ready-addr` HARNESS_READYZ, `--model` HARNESS_MODEL. With HARNESS_KIND set
 * (a pod made for the reference), HARNESS_ADDR and HARNESS_READYZ default to its `:80` and `:8081`, and
 * HARNESS_KIND=chat needs HARNESS_MODEL as there. Without it, `--harness` and `--listen` are required and
 * no probe is served unless asked: a bare `harnesshost node` never binds every interface by itself.
 */
export function nodeSettings(values: FlagValues, env: NodeJS.ProcessEnv): NodeSettings {
  const kind = setting(env, "HARNESS_KIND");
  const harness = str(values, "harness") ?? kind;
  const listen = str(values, "listen") ?? setting(env, "HARNESS_ADDR") ?? (kind ? POD_LISTEN : undefined);
  const readyAddr = str(values, "ready-addr") ?? setting(env, "HARNESS_READYZ") ?? (kind ? POD_READY_ADDR : undefined);
  const modelFlag = str(values, "model");
  const model = modelFlag ?? (harness === "chat" ? setting(env, "HARNESS_MODEL") : undefined);
  if (harness === undefined || harness === "") throw new UsageError("--harness is required (or set HARNESS_KIND)");
  if (listen === undefined || listen === "") throw new UsageError("--listen is required (or set HARNESS_ADDR)");
  if (modelFlag !== undefined && harness !== "chat")
    throw new UsageError(`--model is the chat harness's model id; this node serves ${JSON.stringify(harness)}`);
  if (harness === "chat" && harness === kind && model === undefined)
    throw new UsageError("HARNESS_MODEL is required when HARNESS_KIND=chat");
  return {
    harness,
    listen: listen.startsWith(":") ? `0.0.0.0${listen}` : listen,
    ...(readyAddr !== undefined ? { readyAddr } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

export const nodeCommand: Command = {
  name: "node",
  usage:
    "node --harness <echo|counter|chat|ask|askcounter|question|module.js> --listen <host:port|:port|unix:///path> [--ready-addr host:port|:port] [--model ID (chat)] [--no-actors] [--parent-stdin] [--log-level warn] [--log-format json|pretty] [--pid-file F] [--detach [--log-file F]]",
  options: {
    harness: { type: "string" },
    listen: { type: "string" },
    "ready-addr": { type: "string" },
    model: { type: "string" },
    "no-actors": { type: "boolean" },
    "parent-stdin": { type: "boolean" },
    "pid-file": { type: "string" },
    detach: { type: "boolean" },
    "log-file": { type: "string" },
    "log-level": { type: "string" },
    "log-format": { type: "string" },
  },
  async run(ctx) {
    const pidFile = str(ctx.values, "pid-file");
    const logFile = str(ctx.values, "log-file");
    if (ctx.values["detach"] === true) {
      if (ctx.values["parent-stdin"] === true) throw new UsageError("--detach and --parent-stdin exclude each other");
      nodeSettings(ctx.values, process.env);
      return detach("node", ctx.argv, logFile ?? DEFAULT_NODE_LOG, ctx);
    }
    if (logFile !== undefined && !isDetachedChild())
      throw new UsageError("--log-file goes with --detach (in the foreground the log is stderr)");
    // A node logs to stderr (a spawned node's stderr is its host's): warn and up unless asked.
    const level = LOG_LEVELS.find((l) => l === (str(ctx.values, "log-level") ?? "warn"));
    if (level === undefined) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
    const formatFlag = str(ctx.values, "log-format");
    const format = formatFlag === undefined ? defaultLogFormat(2, isatty) : LOG_FORMATS.find((f) => f === formatFlag);
    if (format === undefined) throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(", ")}`);
    const settings = nodeSettings(ctx.values, process.env);
    const harness = settings.harness;
    const logger = createLog({ level, format, base: { component: "harnesshost-node", harness } });
    // Traces: the same OTEL_* environment as the host (a spawned node inherits it); off when unset.
    await startTracing(process.env, { serviceName: "harnesshost-node" });
    const model = settings.model;
    const factory: HarnessFactory =
      model !== undefined ? () => new ChatAgent({ model }) : await loadHarnessFactory(harness);
    const node = await serveHarness(factory, {
      listen: settings.listen,
      actors: ctx.values["no-actors"] !== true,
      logger,
      buildDigest: model !== undefined ? "" : moduleDigest(harness),
    });
    let probe: ReadyProbe | undefined;
    if (settings.readyAddr !== undefined) {
      try {
        probe = await serveReadyProbe(settings.readyAddr);
      } catch (err) {
        await node.close();
        throw err;
      }
    }
    if (pidFile !== undefined) writePidFile(pidFile);
    ctx.out(
      JSON.stringify({
        event: "listening",
        address: node.address,
        ...(probe ? { ready: `http://${probe.address}/readyz` } : {}),
        pid: process.pid,
      }),
    );
    reportReady(`harnesshost node listening address=${node.address}${probe ? ` ready=${probe.address}` : ""}`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      watchNpmExec(stop);
      if (ctx.values["parent-stdin"] === true) {
        process.stdin.once("end", stop);
        process.stdin.once("close", stop);
        process.stdin.resume();
      }
    });
    await probe?.close();
    await node.close();
    if (pidFile !== undefined) removePidFile(pidFile);
    await stopTracing();
    process.stdin.pause();
    return 0;
  },
};
