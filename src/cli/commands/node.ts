// `harnesshost node`: serve one harness as a gRPC harness node (Harness + Actors services). Invariant:
// the node announces its address on stdout only once it is listening, and exits cleanly (actors
// dropped, socket removed) on SIGINT/SIGTERM — or when its parent closes stdin, with --parent-stdin.
// With --pid-file the pid file exists exactly while it listens; --detach returns once it listens.
import { loadHarnessFactory } from "../../host/runtimes.js";
import { serveHarness } from "../../node/serve.js";
import { detach, reportReady } from "../background/detach.js";
import { watchNpmExec } from "../background/npx-watch.js";
import { removePidFile, writePidFile } from "../background/pid-file.js";
import { requireStr, str, UsageError, type Command } from "../command.js";

/** Where a detached node logs unless --log-file says otherwise. */
export const DEFAULT_NODE_LOG = "./.harnesshost/node.log";

export const nodeCommand: Command = {
  name: "node",
  usage:
    "node --harness <echo|counter|chat|ask|askcounter|question|module.js> --listen <host:port|unix:///path> [--no-actors] [--parent-stdin] [--pid-file F] [--detach [--log-file F]]",
  options: {
    harness: { type: "string" },
    listen: { type: "string" },
    "no-actors": { type: "boolean" },
    "parent-stdin": { type: "boolean" },
    "pid-file": { type: "string" },
    detach: { type: "boolean" },
    "log-file": { type: "string" },
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
    const factory = await loadHarnessFactory(requireStr(ctx.values, "harness"));
    const node = await serveHarness(factory, {
      listen: requireStr(ctx.values, "listen"),
      actors: ctx.values["no-actors"] !== true,
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
    process.stdin.pause();
    return 0;
  },
};
