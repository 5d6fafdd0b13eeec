// Runs the ```sh blocks of a Markdown document as a test script: extraction, free ports, and a bounded
// wait for every backgrounded service. Invariant: the commands run are the document's, changed only
// by the caller's explicit substitutions (paths, ports, the checkout's bin).
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The ```sh blocks of the section whose `## ` heading starts with `headingPrefix`. */
export function shBlocks(markdown: string, headingPrefix: string): string[] {
  return codeBlocks(markdown, headingPrefix, "sh");
}

/** The ```lang blocks of the `## headingPrefix…` section, in order. */
export function codeBlocks(markdown: string, headingPrefix: string, lang: string): string[] {
  const start = markdown.indexOf(`\n## ${headingPrefix}`);
  if (start < 0) throw new Error(`no section "## ${headingPrefix}…"`);
  const end = markdown.indexOf("\n## ", start + 4);
  const fence = new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, "g");
  return [...markdown.slice(start, end < 0 ? undefined : end).matchAll(fence)].map((m) => m[1]!);
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => (typeof addr === "object" && addr ? res(addr.port) : rej(new Error("no port"))));
    });
  });
}

function reachable(port: string): string {
  return `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"`;
}

/**
 * A strict bash script from the lines: continuation lines joined, background jobs killed on exit, and
 * after each backgrounded line a bounded poll until its unix socket (`--listen unix://…`) or its
 * `--addr`/`--registry-addr`/`--http-addr` ports answer (port 0 is not awaited).
 */
export function withBackgroundWaits(script: string, polls = 600): string {
  const lines = script.split("\n");
  const out = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (line.endsWith("\\")) line = `${line.slice(0, -1)} ${(lines[++i] ?? "").trimStart()}`;
    out.push(line);
    if (!/\s&\s*$/.test(line)) continue;
    const sock = /--listen unix:\/\/(\S+)/.exec(line)?.[1];
    const ports = [...line.matchAll(/--(?:registry-|http-)?addr 127\.0\.0\.1:(\d+)/g)]
      .map((m) => m[1]!)
      .filter((p) => p !== "0");
    const checks = sock ? [`test -S ${sock}`] : ports.map(reachable);
    for (const check of checks) out.push(`for i in $(seq 1 ${polls}); do ${check} && break; sleep 0.2; done; ${check}`);
  }
  return out.join("\n");
}

export async function bash(script: string, cwd: string, timeoutMs: number): Promise<string> {
  const { stdout } = await run("bash", ["-c", script], { cwd, maxBuffer: 16 << 20, timeout: timeoutMs });
  return stdout;
}
