// `harnesshost serve` processes for the multi-host figures: each started from the TypeScript source on
// one PostgreSQL journal, on loopback ports the OS picks, with a client per process. Invariant: stopAll
// kills every process it started (SIGKILL after a SIGTERM grace) and removes its data directories.
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { connect } from "../../src/client/index.js";
import { GrpcApi } from "../../src/cli/grpc-api.js";
import type { ScratchDir } from "./tmp.js";

const BIN = resolve(import.meta.dirname, "../../scripts/harnesshost-src.mjs");

/** Every serve still running; killed when the bench process exits, however it exits. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface ServeProc {
  readonly pid: number;
  readonly api: GrpcApi;
  stop(): Promise<void>;
}

/** Starts one `serve` on `journal` with its data under `dir`, resolved once it is listening. */
export async function startServe(journal: string, dir: ScratchDir, name: string): Promise<ServeProc> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--journal",
      journal,
      "--data",
      dir.file(name),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "127.0.0.1:0",
      "--http-addr",
      "off",
      "--log-level",
      "warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  live.add(child);
  const exited = new Promise<void>((res) =>
    child.once("exit", () => {
      live.delete(child);
      res();
    }),
  );
  let stderr = "";
  const addr = await new Promise<string>((res, rej) => {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const m = /harnesshost listening addr=(\S+)/.exec(stderr);
      if (m?.[1]) res(m[1]);
    });
    void exited.then(() => rej(new Error(`serve ${name} exited before listening:\n${stderr}`)));
  });
  const api = new GrpcApi(connect({ address: addr }));
  return {
    pid: child.pid ?? 0,
    api,
    stop: async () => {
      await api.close().catch(() => undefined);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
