// Figures that need parts of the tree other helpers are still building (the gRPC Sessions server with
// a spawned harness node, memory forks on the spawned runtime). Invariant: until they are wired they
// report `unavailable` with what is missing — they never fake a number.
import { lazyImport } from "../lib/lazy.js";
import type { Figure, FigureResult } from "../lib/types.js";

async function pending(modules: readonly [string, string][], what: string): Promise<FigureResult> {
  for (const [rel, purpose] of modules) await lazyImport(new URL(rel, import.meta.url), purpose);
  return { status: "unavailable", reason: `${what} — its modules exist, the bench does not drive them yet` };
}

export const turnLatency: Figure = {
  key: "turn_latency_ratio",
  title: "echo turn over gRPC (serve + harness node, unix socket) vs raw grpc-js unary",
  run: () =>
    pending(
      [
        ["../../src/server/index.js", "gRPC Sessions server (src/server)"],
        ["../../src/runtime/builders.js", "spawned runtime (src/runtime/builders.ts)"],
      ],
      "turn latency needs `serve` with a spawned echo node and a raw grpc-js unary baseline on the same unix socket",
    ),
};

export const forkFanout: Figure = {
  key: "fork_fanout_ratio",
  extraKeys: ["fork_blob_copies"],
  title: "fork of 100 children of a memory actor (total / one child; blob copies)",
  run: () =>
    pending(
      [["../../src/runtime/builders.js", "spawned runtime (src/runtime/builders.ts)"]],
      "memory fork fan-out needs a counter actor on the spawned runtime",
    ),
};
