// SIGTERM drains and exits within its bound (limit drainMs, docs/operations.md "Limits") even while a
// hostile node holds a call open: a real `harnesshost serve` whose registered node never answers
// SnapshotActor is stopped in the middle of an Exec's every-turn checkpoint. It must cancel that call,
// exit 0 after logging "stopped", and leave a journal that verifies.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { main } from "../../src/cli/run.js";
import { type EvilNode, serveEvilNode, silentStream } from "../fixtures/evil-node.js";
import { ServeProcess, until } from "../reliability/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "hh-drain-"));
let node: EvilNode | undefined;
let serve: ServeProcess | undefined;

afterAll(async () => {
  await serve?.kill();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out, err };
}

describe("harnesshost serve under a hostile node", () => {
  it("sigterm drains: an Exec stuck in a silent node's SnapshotActor is cancelled and serve exits 0 within drainMs + force", async () => {
    const evil = await serveEvilNode(builtinHarnesses["counter"]!, {
      actors: { snapshotActor: (_req, ctx) => silentStream(ctx.signal) },
    });
    node = evil;
    let stderr = "";
    const data = join(dir, "data");
    // snapshotMs is far beyond the test's bound: only the drain's cancellation can free the checkpoint.
    serve = await ServeProcess.start({
      args: [
        "--data",
        data,
        "--addr",
        "127.0.0.1:0",
        "--registry-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
        "--harness",
        `evil=remote:${evil.address}`,
        "--limit",
        "drainMs=200",
        "--limit",
        "snapshotMs=600000",
        "--gc-interval-ms",
        "0",
      ],
      onStderr: (chunk) => {
        stderr += chunk;
      },
    });
    const exec = cli("exec", "--server", serve.addr, "--harness", "evil", "--input", "a");
    await until("the Exec's checkpoint reaches the silent SnapshotActor", () => evil.calls.get("snapshotActor") === 1);

    serve.child.kill("SIGTERM");
    const exited = await Promise.race([
      serve.exited,
      new Promise<"still running">((resolve) => setTimeout(resolve, 30_000, "still running")),
    ]);
    expect(exited, stderr).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('"msg":"stopped"');
    // The client saw its stream end (the turn had committed; its checkpoint was cancelled, not awaited).
    await exec;

    const verified = await cli("verify", "--journal", join(data, "journal.db"));
    expect(verified.err).toEqual([]);
    expect(verified.code).toBe(0);
  });
});
