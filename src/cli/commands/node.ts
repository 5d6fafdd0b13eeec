// `harnesshost node`: serve one harness as a gRPC harness node (Harness + Actors services). Invariant:
// the node announces its address on stdout only once it is listening, and exits cleanly (actors
// dropped, socket removed) on SIGINT/SIGTERM — or when its parent closes stdin, with --parent-stdin.
// With --pid-file the pid file exists exactly while it listens; --detach returns once it listens.
import { loadHarnessFactory } from "../../host/runtimes.js";
import { serveHarness } from "../../node/serve.js";
import { detach, reportReady } from "../background/detach.js";
import { watchNpmExec } from "../background/npx-watch.js";
import { removePidFile, writePidFile } from "../background/pid-file.js";
import { createLog, defaultLogFormat, LOG_FORMATS, LOG_LEVELS } from "../../obs/log.js";
import { startTracing, stopTracing } from "../../obs/trace.js";
import { isatty } from "node:tty";
import { requireStr, str, UsageError, type Command } from "../command.js";

/** Where a detached node logs unless --log-file says otherwise. */
export const DEFAULT_NODE_LOG = "./.harnesshost/node.log";

export const nodeCommand: Command = {
  name: "node",
  usage:
    "node --harness <echo|counter|chat|ask|askcounter|question|module.js> --listen <host:port|unix:///path> [--no-actors] [--parent-stdin] [--log-level warn] [--log-format json|pretty] [--pid-file F] [--detach [--log-file F]]",
  options: {
    harness: { type: "string" },
    listen: { type: "string" },
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
      requireStr(ctx.values, "harness");
      requireStr(ctx.values, "listen");
      return detach("node", ctx.argv, logFile ?? DEFAULT_NODE_LOG, ctx);
    }
    if (logFile !== undefined)
      throw new UsageError("--log-file goes with --detach (in the foreground the log is stderr)");
    // A node logs to stderr (a spawned node's stderr is its host's): warn and up unless asked.
    const level = LOG_LEVELS.find((l) => l === (str(ctx.values, "log-level") ?? "warn"));
    if (level === undefined) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
    const formatFlag = str(ctx.values, "log-format");
    const format = formatFlag === undefined ? defaultLogFormat(2, isatty) : LOG_FORMATS.find((f) => f === formatFlag);
    if (format === undefined) throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(", ")}`);
    const harness = requireStr(ctx.values, "harness");
    const logger = createLog({ level, format, base: { component: "harnesshost-node", harness } });
    // Traces: the same OTEL_* environment as the host (a spawned node inherits it); off when unset.
    await startTracing(process.env, { serviceName: "harnesshost-node" });
    const factory = await loadHarnessFactory(harness);
    const node = await serveHarness(factory, {
      listen: requireStr(ctx.values, "listen"),
      actors: ctx.values["no-actors"] !== true,
      logger,
    });
    if (pidFile !== undefined) writePidFile(pidFile);
    ctx.out(JSON.stringify({ event: "listening", address: node.address, pid: process.pid }));
    reportReady(`harnesshost node listening address=${node.address}`);
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
    await node.close();
    if (pidFile !== undefined) removePidFile(pidFile);
    await stopTracing();
    process.stdin.pause();
    return 0;
  },
};
