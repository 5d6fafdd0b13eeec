// The console's static files (built by Vite into dist/console, shipped in the package). Invariants: the
// set of servable paths is fixed when the listener starts — read once from the build directory — so a
// request path is only ever a key lookup (no path joins, no traversal); every answer carries a strict
// Content-Security-Policy (same-origin scripts, styles and fetches only, nothing inline but styles),
// nosniff and no-referrer; a missing build answers 503 saying how to build it, never a blank page.
import { readdirSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, relative, sep } from "node:path";
import { PACKAGE_ROOT } from "../paths.js";

/**
 * Where the console is read from: `npm run build` puts it in dist/console (vite.config.ts outDir);
 * HARNESSHOST_CONSOLE_DIR serves another build instead (console development, the browser tests).
 */
export const CONSOLE_DIR = process.env["HARNESSHOST_CONSOLE_DIR"] || join(PACKAGE_ROOT, "dist", "console");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  /** Hashed build outputs never change; index.html always revalidates. */
  readonly immutable: boolean;
}

function walk(dir: string, root: string, into: Map<string, Asset>): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      walk(full, root, into);
      continue;
    }
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const url = `/${relative(root, full).split(sep).join("/")}`;
    into.set(url, { body: readFileSync(full), type, immutable: url.startsWith("/assets/") });
  }
}

export class ConsoleAssets {
  private readonly files = new Map<string, Asset>();

  constructor(readonly dir: string = CONSOLE_DIR) {
    try {
      walk(dir, dir, this.files);
    } catch {
      this.files.clear();
    }
  }

  get built(): boolean {
    return this.files.has("/index.html");
  }

  /** Answers a GET/HEAD for the console; false when `path` is not the console's (the caller 404s). */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    const key = path === "/" ? "/index.html" : path;
    const asset = this.files.get(key);
    const common = {
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    };
    if (asset === undefined) {
      if (path !== "/") return false;
      res.writeHead(503, { ...common, "content-type": "text/plain; charset=utf-8" });
      res.end(`the console is not built (no ${join(this.dir, "index.html")}); run npm run build\n`);
      return true;
    }
    res.writeHead(200, {
      ...common,
      "content-type": asset.type,
      "content-length": asset.body.byteLength,
      "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    });
    res.end(req.method === "HEAD" ? undefined : asset.body);
    return true;
  }
}
