// `harnesshost node`: serve one harness as a gRPC harness node (Harness + Actors services). Invariant:
// the node announces its address on stdout only once it is listening, and exits cleanly (actors
// dropped, socket removed) on SIGINT/SIGTERM — or when its parent closes stdin, with --parent-stdin.
import { loadHarnessFactory } from "../../host/runtimes.js";
import { serveHarness } from "../../node/serve.js";
import { requireStr, type Command } from "../command.js";

export const nodeCommand: Command = {
  name: "node",
  usage:
    "node --harness <echo|counter|chat|module.js> --listen <host:port|unix:///path> [--no-actors] [--parent-stdin]",
  options: {
    harness: { type: "string" },
    listen: { type: "string" },
    "no-actors": { type: "boolean" },
    "parent-stdin": { type: "boolean" },
  },
  async run(ctx) {
    const factory = await loadHarnessFactory(requireStr(ctx.values, "harness"));
    const node = await serveHarness(factory, {
      listen: requireStr(ctx.values, "listen"),
      actors: ctx.values["no-actors"] !== true,
    });
    ctx.out(JSON.stringify({ event: "listening", address: node.address, pid: process.pid }));
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      if (ctx.values["parent-stdin"] === true) {
        process.stdin.once("end", stop);
        process.stdin.once("close", stop);
        process.stdin.resume();
      }
    });
    await node.close();
    process.stdin.pause();
    return 0;
  },
};
