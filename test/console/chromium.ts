// The browser the console tests drive: Debian's chromium-headless-shell (scripts/ensure-test-deps.mjs
// installs it with apt-get), found on disk — never downloaded. Invariant: a missing browser fails the
// tests with the command that installs it; it never skips them.
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = ["chromium-headless-shell", "chromium"];

export function chromiumExecutable(): string {
  const dirs = ["/usr/bin", ...(process.env["PATH"] ?? "").split(delimiter)];
  for (const name of CANDIDATES)
    for (const dir of dirs) {
      const path = join(dir, name);
      if (existsSync(path)) return path;
    }
  throw new Error(
    "no chromium-headless-shell: install it with apt-get install -y --no-install-recommends chromium-headless-shell (npm test's first step does, as root)",
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumExecutable(), timeout: 60_000 });
}
