// A real `harnesshost serve` on loopback for the browser tests, serving a console built for this run.
// Invariant: the console is built once per test file into its own directory (HARNESSHOST_CONSOLE_DIR),
// so a concurrent `npm pack` rebuilding dist/console can never pull the page out from under a test.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { ServeProcess } from "../reliability/serve-process.js";

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../..");

/** Builds the console into a fresh directory; resolves to it. */
export async function buildConsole(): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), "hh-console-build-"));
  await run(
    process.execPath,
    [
      join(REPO, "node_modules/vite/bin/vite.js"),
      "build",
      "--config",
      "console/vite.config.ts",
      "--outDir",
      out,
      "--emptyOutDir",
    ],
    { cwd: REPO, maxBuffer: 16 << 20 },
  );
  return out;
}

export interface ConsoleHost {
  readonly url: string;
  readonly dir: string;
  readonly journal: string;
  stop(): Promise<void>;
}

/** `harnesses`: extra `serve --harness` specs (e.g. `ver@1=local:FILE`). */
export async function startConsoleHost(
  consoleDir: string,
  opts: { token?: string; tokenFile?: string; harnesses?: readonly string[] } = {},
): Promise<ConsoleHost> {
  const dir = mkdtempSync(join(tmpdir(), "hh-console-host-"));
  const args = ["--data", join(dir, "data"), "--addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"];
  args.push("--http-addr", "127.0.0.1:0", "--log-level", "warn");
  for (const h of opts.harnesses ?? []) args.push("--harness", h);
  // `token`: one bare token; `tokenFile`: a whole server token file (principals, a jwt line).
  const tokens = opts.tokenFile ?? (opts.token !== undefined ? `${opts.token}\n` : undefined);
  if (tokens !== undefined) {
    writeFileSync(join(dir, "tokens"), tokens, { mode: 0o600 });
    args.push("--token-file", join(dir, "tokens"));
  }
  let stderr = "";
  const proc = await ServeProcess.start({
    args,
    env: { ...process.env, HARNESSHOST_CONSOLE_DIR: consoleDir },
    onStderr: (c) => {
      stderr += c;
    },
  });
  const url = /console=(\S+)/.exec(stderr)?.[1];
  if (url === undefined) throw new Error(`no console URL on the listening line:\n${stderr}`);
  return {
    url,
    dir,
    journal: join(dir, "data", "journal.db"),
    async stop() {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
