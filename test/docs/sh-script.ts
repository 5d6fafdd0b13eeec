// Runs the ```sh blocks of a Markdown document as a test script: extraction, free ports, strict mode.
// Invariant: the commands run are the document's, changed only by the caller's explicit substitutions
// (paths and ports; npx-doc.ts lists the ones doc tests make) — no wait is injected, so a race in the text fails here too.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
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

/**
 * The document's lines as a strict bash script (`set -euo pipefail`, and background jobs killed on
 * exit), unchanged otherwise: no wait is added anywhere. A command backgrounded with `&` is refused —
 * documents start servers with `--detach`, which returns once they listen (docs/cli.md "Background
 * servers"), and the fake model endpoint the same way.
 */
export function strictScript(script: string): string {
  const joined = script.replace(/\\\n\s*/g, " ");
  const backgrounded = joined.split("\n").find((line) => /(^|[^&])&\s*(#.*)?$/.test(line));
  if (backgrounded !== undefined)
    throw new Error(`a documented command is backgrounded with &, which races the next line: ${backgrounded}`);
  return `set -euo pipefail\ntrap 'echo "sh-script: exit $? at document line $((LINENO - 3)): $BASH_COMMAND" >&2' ERR\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}`;
}

/** The pid files under `dir`, not looking into node_modules (a project's, or a link to one). */
function pidFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules") out.push(...pidFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".pid")) out.push(path);
  }
  return out;
}

/** Stops every harnesshost process a pid file under `dir` names (cleanup after a failed script). */
export function stopPidFiles(dir: string): void {
  for (const file of pidFiles(dir)) {
    const pid = Number(readFileSync(file, "utf8").trim());
    if (!Number.isSafeInteger(pid) || pid <= 1) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("harnesshost")) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * Runs `script` with bash in `cwd`; resolves to its stdout. A failure is rethrown naming the failing
 * command (the ERR trap strictScript installs), the end of stdout and all of stderr — the promisified
 * error's message starts with the whole script, which buried them.
 */
export async function bash(script: string, cwd: string, timeoutMs: number): Promise<string> {
  try {
    const { stdout } = await run("bash", ["-c", script], { cwd, maxBuffer: 16 << 20, timeout: timeoutMs });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: unknown; signal?: unknown; killed?: boolean };
    const tail = (e.stdout ?? "").split("\n").slice(-40).join("\n");
    const how = e.killed ? `killed (${String(e.signal)}) after ${timeoutMs} ms` : `exit ${String(e.code)}`;
    throw new Error(`script failed: ${how}\n--- stderr ---\n${e.stderr ?? ""}\n--- last stdout lines ---\n${tail}`, {
      cause: err,
    });
  }
}
