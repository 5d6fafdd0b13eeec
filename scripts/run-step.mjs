// One step of scripts/test.mjs or scripts/check.mjs: a command run to its end. Invariant: it never
// throws — it resolves to the step's name, whether it exited 0, its wall time, and (when `held`) its
// whole output, which otherwise goes straight to this process's stdout and stderr.
import { spawn } from "node:child_process";

export function runStep(name, cmd, args, { held = false, env = process.env, cwd = process.cwd() } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: held ? ["ignore", "pipe", "pipe"] : "inherit", env, cwd });
    let output = "";
    const keep = (c) => {
      output += c;
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.on("error", (err) => resolve({ name, ok: false, output: `${output}${err}\n`, ms: Date.now() - started }));
    child.on("close", (code) => resolve({ name, ok: code === 0, output, ms: Date.now() - started }));
  });
}
